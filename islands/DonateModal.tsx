import { useState } from "react";
import { api } from "./lib/cart-store";
import { Icon } from "./lib/icons";
import { dollars, dollarsToCents } from "./lib/money";
import { useHydrated } from "./lib/hydrated";

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
}

// DonateModal is 'Show Your Support' (SPEC.md section 2): suggested amounts,
// the Achievement Tiers, and a custom amount with a $ prefix. The markup is
// a real form posting to /apps/{app}/donate, so it works before and without
// JavaScript; hydrated, it calls POST /api/donations/create then /process
// (SPEC.md section 4: create, process, close; failures only logged, and
// shown under the input).
export default function DonateModal(props: DonateModalProps) {
  const [amount, setAmount] = useState(props.initialAmount ?? "");
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const [done, setDone] = useState(false);
  const cents = dollarsToCents(amount);
  const hydrated = useHydrated();

  async function send(e: React.FormEvent) {
    e.preventDefault();
    if (cents === null || busy) return;
    setBusy(true);
    setError("");
    try {
      const d = await api<{ id: string }>("POST", "/api/donations/create", {
        appId: props.appId,
        amount: cents,
        currency: "USD",
        message,
      });
      await api("POST", "/api/donations/process", { donationId: d.id });
      setDone(true);
      setAmount("");
      setMessage("");
    } catch (err) {
      const msg = (err as Error).message || "Failed to process donation";
      console.error("donation failed:", msg);
      setError(msg);
    } finally {
      setBusy(false);
    }
  }

  const body = (
    <>
      {props.suggestedAmounts.length > 0 && (
        <section>
          <h3>Quick Donation</h3>
          <div className="amounts">
            {props.suggestedAmounts.map((a) => (
              <button key={a} type="button" className="button button-secondary" onClick={() => setAmount((a / 100).toFixed(2))}>
                {dollars(a)}
              </button>
            ))}
          </div>
        </section>
      )}
      {props.tiers.length > 0 && (
        <section>
          <h3>Achievement Tiers</h3>
          <ul className="tiers">
            {props.tiers.map((t) => (
              <li key={t.id}>
                <strong>{t.name}</strong> <span>{dollars(t.requiredAmount)}</span>
                {t.description && <p>{t.description}</p>}
              </li>
            ))}
          </ul>
        </section>
      )}
      <form method="post" action={"/apps/" + props.appName + "/donate"} onSubmit={send}>
        <textarea name="message" aria-label="Message" placeholder="Say something nice (optional)" maxLength={500} rows={2}
          value={message} onChange={(e) => setMessage(e.target.value)} className="donate-message" />
        <div className="amount-input">
          <span>$</span>
          <input type="number" name="amount" min="0" step="0.01" inputMode="decimal" aria-label="Custom amount" value={amount}
            onChange={(e) => { setAmount(e.target.value); setDone(false); }} />
          <button type="submit" className="button" disabled={cents === null || busy}>
            {busy ? "Sending..." : "Send"}
          </button>
        </div>
      </form>
      {amount !== "" && cents === null && <p className="field-error">Enter an amount above $0</p>}
      {error && <p className="field-error" role="alert">{error}</p>}
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
