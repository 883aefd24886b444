import { useState, type FormEvent } from "react";
import { formatMoney } from "../pages/lib/format";
import { methodLabel } from "../pages/lib/orders";
import { api, clearLocal } from "./lib/cart-store";
import { useHydrated } from "./lib/hydrated";

interface Props {
  appName: string;
  storeId: string;
  orderId: string;
  total: number;
  currency: string;
  walletBalance: number;
  methods: string[];
  error?: string;
}

// CheckoutPayment is the payment step: a real form posting to
// /checkout/pay, which the island turns into one musepay/process call
// (SPEC.md section 4, wallet path) with the error shown in place.
export default function CheckoutPayment(props: Props) {
  const hydrated = useHydrated();
  const [method, setMethod] = useState(props.methods[0] ?? "musepay");
  const [error, setError] = useState(props.error ?? "");
  const [busy, setBusy] = useState(false);
  const base = "/apps/" + props.appName;
  const short = props.walletBalance < props.total;

  async function pay(e: FormEvent) {
    e.preventDefault();
    if (busy) return;
    if (method !== "musepay") {
      setError("Payment method not available");
      return;
    }
    setBusy(true);
    setError("");
    try {
      // Only orderId is read: the server knows who pays whom and how much.
      await api("POST", "/api/store/" + props.storeId + "/musepay/process", {
        orderId: props.orderId,
        amount: props.total / 100,
        currency: props.currency,
      });
      clearLocal(props.storeId);
      window.location.assign(base + "/payment-success?processor=musepay&orderId=" + encodeURIComponent(props.orderId));
    } catch (err) {
      setError((err as Error).message || "Payment failed. Please try again.");
      setBusy(false);
    }
  }

  return (
    <form method="post" action={base + "/checkout/pay"} onSubmit={hydrated ? pay : undefined} className="checkout-pay" data-hydrated={hydrated ? "true" : undefined}>
      <input type="hidden" name="orderId" value={props.orderId} />
      <fieldset className="methods">
        <legend>Payment method</legend>
        {props.methods.map((m) => (
          <label key={m} className={"method" + (m === method ? " selected" : "")}>
            <input type="radio" name="paymentMethod" value={m} checked={m === method} onChange={() => setMethod(m)} />
            <span>{methodLabel(m)}</span>
            {m === "musepay" && <span className="meta">{"Balance " + formatMoney(props.walletBalance, props.currency)}</span>}
          </label>
        ))}
      </fieldset>
      {method === "musepay" && short && (
        <p className="meta">{"Your wallet holds " + formatMoney(props.walletBalance, props.currency) + ", less than this order."}</p>
      )}
      {error && (
        <p className="checkout-error" role="alert">
          <span aria-hidden="true" className="cross">✕</span> {error}
        </p>
      )}
      <button type="submit" className="button pay-button" disabled={busy}>
        {busy ? "Processing..." : "Pay " + formatMoney(props.total, props.currency)}
      </button>
    </form>
  );
}
