import { useEffect, useRef, useState, type FormEvent } from "react";
import { formatMoney } from "../pages/lib/format";
import { methodLabel } from "../pages/lib/orders";
import { api, type Body } from "./lib/api";
import { useHydrated } from "./lib/hydrated";
import type { CardSession } from "./lib/stripe-card";
import { appPath } from "./lib/links";

interface Props {
  appName: string;
  storeId: string;
  amounts: number[];
  methods: string[];
  currency: string;
  // Stripe's publishable key; empty when cards are not configured.
  publishableKey: string;
  returnTo: string;
  // A card top-up started without JavaScript (the form posted): its card
  // form is due.
  card: { topupId: string; amount: number; clientSecret: string } | null;
  error?: string;
}

// AddFunds is the wallet's "Add funds" form (issue 24): a real form posting
// to /wallet/topup (PayPal's approval and Stripe Checkout work without JavaScript),
// which the island turns into the card's Payment Element in place. The
// amount sent only picks one of the amounts offered; the server adds money
// only when the provider says it arrived.
export default function AddFunds(props: Props) {
  const hydrated = useHydrated();
  const [amount, setAmount] = useState(props.card?.amount ?? props.amounts[0] ?? 0);
  const [method, setMethod] = useState(props.card ? "stripe" : props.methods[0] ?? "");
  const [error, setError] = useState(props.error ?? "");
  const [busy, setBusy] = useState(false);
  const [card, setCard] = useState<CardSession | null>(null);
  const [topupId, setTopupId] = useState(props.card?.topupId ?? "");
  const cardEl = useRef<HTMLDivElement>(null);
  const base = appPath(props.appName);
  const back = (added: number) => base + "/transactions?added=" + added + (props.returnTo ? "&return=" + props.returnTo : "");

  async function mount(secret: string, ref: string) {
    if (!props.publishableKey) throw new Error("Stripe publishable key not configured");
    const { mountCard } = await import("./lib/stripe-card");
    if (!cardEl.current) throw new Error("Failed to initialize payment system");
    setCard(await mountCard(cardEl.current, props.publishableKey, secret, ref));
  }

  // A card top-up the form started: mount its card form at once.
  useEffect(() => {
    if (!hydrated || !props.card) return;
    mount(props.card.clientSecret, "").catch((err) => setError((err as Error).message));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [hydrated]);

  async function confirmCard() {
    if (!card) return;
    const ret = window.location.origin + base + "/wallet/topup/return?topupId=" + encodeURIComponent(topupId);
    const res = await card.confirm(ret);
    if (res.error) throw new Error("Payment failed. Please try again. " + res.error);
    // The browser's word is not enough: the server asks Stripe.
    const done = await api("POST", "/api/store/{storeId}/wallet/topups/{topupId}/confirm", { params: { storeId: props.storeId, topupId }, body: {} });
    window.location.assign(done.status === "PAID" ? back(amount) : ret);
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setError("");
    try {
      if (card) {
        await confirmCard();
        return;
      }
      const started = await api("POST", "/api/store/{storeId}/wallet/topups", { params: { storeId: props.storeId }, body: { amount, method: method as Body<"POST", "/api/store/{storeId}/wallet/topups">["method"] }, fallback: "Failed to add funds" });
      setTopupId(started.topupId);
      if (started.approvalUrl) {
        window.location.assign(started.approvalUrl);
        return;
      }
      if (!started.clientSecret) throw new Error("Failed to add funds");
      await mount(started.clientSecret, started.paymentRef);
      setBusy(false);
    } catch (err) {
      setError(err instanceof Error ? err.message || "Failed to add funds" : "An unexpected error occurred");
      setBusy(false);
    }
  }

  if (props.methods.length === 0) {
    return <p className="meta add-funds-off">Adding funds by card or PayPal is not available right now.</p>;
  }
  const locked = !!card || busy;
  const label = busy ? "Processing..." : card ? "Pay " + formatMoney(amount, props.currency) : method === "paypal" ? "Add funds with PayPal" : "Add funds";
  return (
    <form method="post" action={base + "/wallet/topup"} onSubmit={hydrated ? submit : undefined} className="add-funds-form" data-hydrated={hydrated ? "true" : undefined}>
      {props.returnTo && <input type="hidden" name="return" value={props.returnTo} />}
      <fieldset className="amounts" disabled={locked}>
        <legend>Amount</legend>
        {props.amounts.map((a) => (
          <label key={a} className="amount-choice">
            <input type="radio" name="amount" value={a} checked={a === amount} onChange={() => setAmount(a)} />
            <span>{formatMoney(a, props.currency)}</span>
          </label>
        ))}
      </fieldset>
      <fieldset className="methods" disabled={locked}>
        <legend>Pay with</legend>
        {props.methods.map((m) => (
          <label key={m} className="method topup-method">
            <input type="radio" name="method" value={m} checked={m === method} onChange={() => setMethod(m)} />
            <span>{methodLabel(m)}</span>
          </label>
        ))}
      </fieldset>
      <div ref={cardEl} className="card-element" />
      {error && (
        <p className="checkout-error" role="alert">
          <span aria-hidden="true" className="cross">✕</span> {error}
        </p>
      )}
      <button type="submit" className="button add-funds-button" disabled={busy}>
        {label}
      </button>
    </form>
  );
}
