import { useEffect, useRef, useState } from "react";
import { api } from "./lib/api";
import { Icon } from "./lib/icons";
import { dollars, dollarsToCents } from "./lib/money";
import { useHydrated } from "./lib/hydrated";
import type { CardSession } from "./lib/stripe-card";
import { appPath } from "./lib/links";

export interface DonateModalProps {
  appId: string;
  appName: string;
  suggestedAmounts: number[]; // cents
  tiers: { id: string; name: string; requiredAmount: number; description: string }[];
  onClose?: () => void;
  // asPage: rendered inside the no-JavaScript donation page, where the
  // form posts to the page and there is nothing to close.
  asPage?: boolean;
  initialAmount?: string;
  // Stripe's publishable key; empty when cards are not configured (then
  // the wallet is the only method).
  publishableKey?: string;
}


// DonateModal is 'Show Your Support' (SPEC.md section 2): suggested amounts,
// the Achievement Tiers, and a custom amount with a $ prefix. The markup is
// a real form posting to /apps/{app}/donate, so it works before and without
// JavaScript; hydrated, it calls POST /api/donations/create then /process
// (SPEC.md section 4: create, process, close; failures only logged, and
// shown under the input). With Stripe configured it also offers a card:
// /process answers a PaymentIntent for the donation, Stripe's Payment
// Element (loaded only then) confirms it, and /process again lets the
// server ask Stripe; the donation counts only once Stripe says it is paid.
export default function DonateModal(props: DonateModalProps) {
  const [amount, setAmount] = useState(props.initialAmount ?? "");
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const [done, setDone] = useState(false);
  const [pending, setPending] = useState(false);
  const [method, setMethod] = useState<"musepay" | "stripe">("musepay");
  // A card donation: the donation made for the amount shown, and the
  // Payment Element mounted for its PaymentIntent.
  const [card, setCard] = useState<CardSession | null>(null);
  const [cardDonation, setCardDonation] = useState("");
  const cardEl = useRef<HTMLDivElement>(null);
  const cents = dollarsToCents(amount);
  const hydrated = useHydrated();
  const cardOn = Boolean(props.publishableKey);

  // The PaymentIntent is for one amount: changing the amount, the message
  // or the method drops it (the unpaid donation simply never counts).
  function resetCard() {
    setCard(null);
    setCardDonation("");
  }
  // The element goes when its session does (reset, or the modal closing).
  useEffect(() => () => card?.destroy(), [card]);

  function createDonation() {
    return api("POST", "/api/donations/create", {
      body: { appId: props.appId, amount: cents!, currency: "USD", message },
      fallback: "Failed to create donation",
    });
  }

  async function startCard() {
    const d = await createDonation();
    const res = await api("POST", "/api/donations/process", { body: { donationId: d.id, paymentMethod: "stripe" }, fallback: "Failed to process donation" });
    if (res.status === "PAID") return finished();
    if (!res.payment?.clientSecret) throw new Error("Failed to create payment intent");
    const { mountCard } = await import("./lib/stripe-card");
    if (!cardEl.current) return;
    setCard(await mountCard(cardEl.current, props.publishableKey!, res.payment.clientSecret, res.payment.ref));
    setCardDonation(d.id);
  }

  async function payCard() {
    const back = window.location.origin + appPath(props.appName) + "/donate?donation=" + encodeURIComponent(cardDonation);
    const res = await card!.confirm(back);
    if (res.error) throw new Error("Payment failed. Please try again. " + res.error);
    // The browser's word is not enough: the server asks Stripe.
    const d = await api("POST", "/api/donations/process", { body: { donationId: cardDonation, paymentMethod: "stripe" }, fallback: "Failed to process donation" });
    if (d.status === "PAID") return finished();
    resetCard();
    setPending(true);
  }

  function finished() {
    // On the /donate page the balance and the total given are the page's:
    // it loads again, as it does after the form post, and shows them new.
    if (props.asPage) {
      window.location.assign(appPath(props.appName) + "/donate?thanks=1");
      return;
    }
    resetCard();
    setDone(true);
    setAmount("");
    setMessage("");
  }

  async function send(e: React.FormEvent) {
    e.preventDefault();
    if (cents === null || busy) return;
    setBusy(true);
    setError("");
    setPending(false);
    try {
      if (method === "stripe" && card) await payCard();
      else if (method === "stripe") await startCard();
      else {
        const d = await createDonation();
        await api("POST", "/api/donations/process", { body: { donationId: d.id }, fallback: "Failed to process donation" });
        finished();
      }
    } catch (err) {
      const msg = (err as Error).message || "Failed to process donation";
      console.error("donation failed:", msg);
      setError(msg);
    } finally {
      setBusy(false);
    }
  }

  let label = "Send";
  if (busy) label = "Sending...";
  else if (method === "stripe" && card && cents !== null) label = "Pay " + dollars(cents);
  else if (method === "stripe") label = "Continue to card";

  // Headings follow the page's: under the page's h1, or the modal's h2.
  const H = props.asPage ? "h2" : "h3";
  const body = (
    <>
      {props.suggestedAmounts.length > 0 && (
        <section>
          <H>Quick Donation</H>
          <div className="amounts">
            {props.suggestedAmounts.map((a) => (
              // Without JavaScript each amount is a link that fills the
              // donate page's input; hydrated it fills this one.
              <a key={a} className="button button-secondary" href={appPath(props.appName) + "/donate?amount=" + (a / 100).toFixed(2)}
                onClick={(e) => { e.preventDefault(); setAmount((a / 100).toFixed(2)); setDone(false); resetCard(); }}>
                {dollars(a)}
              </a>
            ))}
          </div>
        </section>
      )}
      {props.tiers.length > 0 && (
        <section>
          <H>Achievement Tiers</H>
          <ul className="tiers">
            {props.tiers.map((t) => (
              <li key={t.id}>
                {/* A tier fills the amount it asks for (a link without
                    JavaScript, as the quick amounts are). */}
                <a className="tier-pick" href={appPath(props.appName) + "/donate?amount=" + (t.requiredAmount / 100).toFixed(2)}
                  onClick={(e) => { e.preventDefault(); setAmount((t.requiredAmount / 100).toFixed(2)); setDone(false); resetCard(); }}>
                  <strong>{t.name}</strong> <span>{dollars(t.requiredAmount)}</span>
                  {t.description && <span className="tier-description">{t.description}</span>}
                </a>
              </li>
            ))}
          </ul>
        </section>
      )}
      <form method="post" action={appPath(props.appName) + "/donate"} onSubmit={send} className="donate-form">
        <textarea name="message" aria-label="Message" placeholder="Say something nice (optional)" maxLength={500} rows={2}
          value={message} onChange={(e) => { setMessage(e.target.value); resetCard(); }} className="donate-message" />
        {cardOn && hydrated && (
          <fieldset className="methods donate-methods">
            <legend>Pay with</legend>
            {(["musepay", "stripe"] as const).map((m) => (
              <label key={m} className={"method" + (m === method ? " selected" : "")}>
                <input type="radio" name="paymentMethod" value={m} checked={m === method}
                  onChange={() => { setMethod(m); resetCard(); setError(""); }} />
                <span>{m === "musepay" ? "Wallet" : "Card"}</span>
              </label>
            ))}
          </fieldset>
        )}
        {cardOn && !hydrated && (
          <p className="meta card-needs-js">
            Paying by card needs JavaScript. Without it, this form pays from your wallet.
          </p>
        )}
        <div className="amount-input">
          <span>$</span>
          <input type="number" name="amount" min="0" step="0.01" inputMode="decimal" aria-label="Custom amount" value={amount}
            onChange={(e) => { setAmount(e.target.value); setDone(false); resetCard(); }} />
          <button type="submit" className="button donate-send" disabled={hydrated && (cents === null || busy)}>
            {label}
          </button>
        </div>
        {method === "stripe" && (
          <div className="card-form">
            <div ref={cardEl} className="card-element" />
          </div>
        )}
      </form>
      {amount !== "" && cents === null && <p className="field-error">Enter an amount above $0</p>}
      {error && <p className="field-error" role="alert">{error}</p>}
      {pending && (
        <p className="notice" role="status">
          Your card payment is being processed. It counts once it goes through.
        </p>
      )}
      {done && <p className="notice" role="status">Thank you for your support!</p>}
    </>
  );

  if (props.asPage) return <div className="donate-page-form" data-hydrated={hydrated || undefined}>{body}</div>;
  return (
    <div className="modal" role="dialog" aria-label="Show Your Support">
      <div className="panel-head">
        <h2>Show Your Support</h2>
        <button type="button" className="icon-button" aria-label="Close" onClick={props.onClose}>
          <Icon name="CLOSE" />
        </button>
      </div>
      {body}
    </div>
  );
}
