import { useEffect, useRef, useState, type FormEvent } from "react";
import { formatMoney } from "../pages/lib/format";
import { methodLabel } from "../pages/lib/orders";
import { api } from "./lib/api";
import { clearLocal } from "./lib/cart-store";
import { useHydrated } from "./lib/hydrated";
import type { CardSession } from "./lib/stripe-card";
import { appPath } from "./lib/links";

interface Props {
  appName: string;
  storeId: string;
  orderId: string;
  total: number;
  currency: string;
  walletBalance: number;
  methods: string[];
  // Stripe's publishable key; empty when cards are not configured.
  publishableKey?: string;
  // addFundsHref is the wallet's "Add funds" form, offered instead of Pay
  // when the wallet is the only method and holds too little.
  addFundsHref?: string;
  error?: string;
}

// CheckoutPayment is the payment step: a real form posting to
// /checkout/pay (wallet, and PayPal's redirect, work without JavaScript),
// which the island turns into the SPEC.md section 4 paths: the wallet's one
// call; the card's PaymentIntent, Payment Element and server confirm; or
// PayPal's order and approval redirect. Only the methods the server has
// configured are offered. The amount sent is the order's, and the server
// checks it against the order anyway.
export default function CheckoutPayment(props: Props) {
  const hydrated = useHydrated();
  const [method, setMethod] = useState(props.methods[0] ?? "musepay");
  const [error, setError] = useState(props.error ?? "");
  const [busy, setBusy] = useState(false);
  const [card, setCard] = useState<CardSession | null>(null);
  const [cardLoading, setCardLoading] = useState(false);
  const cardEl = useRef<HTMLDivElement>(null);
  const base = appPath(props.appName);
  const params = { storeId: props.storeId };
  const short = props.walletBalance < props.total;
  const paid = () => {
    // The cart became this order at checkout; the locally kept copy goes too.
    clearLocal(props.storeId);
  };

  // The card form is set up when the card method is chosen: one
  // PaymentIntent per order (the server makes the same one however often
  // this runs), then Stripe's Payment Element.
  useEffect(() => {
    if (!hydrated || method !== "stripe" || card || cardLoading) return;
    if (!props.publishableKey) {
      setError("Stripe publishable key not configured");
      return;
    }
    let cancelled = false;
    setCardLoading(true);
    setError("");
    (async () => {
      try {
        // SPEC.md section 7: the card form starts from the store's payment
        // configuration (the key the page was rendered with may be stale).
        const config = await api("GET", "/api/store/{storeId}/stripe-payments/config", { params }).catch(() => {
          throw new Error("Failed to fetch payment configuration");
        });
        const key = config.stripe?.publishableKey;
        if (!key) throw new Error("Stripe publishable key not configured");
        const intent = await api("POST", "/api/store/{storeId}/stripe-payments/create-intent", {
          params,
          body: { orderId: props.orderId, amount: props.total, currency: props.currency, metadata: { source: "checkout" } },
        });
        const { mountCard } = await import("./lib/stripe-card");
        if (cancelled || !cardEl.current) return;
        setCard(await mountCard(cardEl.current, key, intent.clientSecret, intent.paymentIntentId));
      } catch (err) {
        if (!cancelled) setError((err as Error).message || "Failed to create payment intent");
      } finally {
        if (!cancelled) setCardLoading(false);
      }
    })();
    return () => {
      cancelled = true;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [hydrated, method]);

  async function payWallet() {
    // Only orderId is read: the server knows who pays whom and how much.
    // SPEC.md section 8: '{product}Pay transaction failed' when the server
    // gives no message.
    await api("POST", "/api/store/{storeId}/musepay/process", {
      params,
      body: { orderId: props.orderId, amount: props.total / 100, currency: props.currency },
      fallback: "MusePay transaction failed",
    });
    paid();
    window.location.assign(base + "/payment-success?processor=musepay&orderId=" + encodeURIComponent(props.orderId));
  }

  async function payCard() {
    if (!props.publishableKey) throw new Error("Stripe publishable key not configured");
    if (!card) throw new Error(cardLoading ? "The card form is still loading" : "Failed to initialize payment system");
    const back = window.location.origin + base + "/payment-success?processor=stripe&orderId=" + encodeURIComponent(props.orderId);
    const res = await card.confirm(back);
    if (res.error) throw new Error("Payment failed. Please try again. " + res.error);
    // The browser's word is not enough: the server asks Stripe.
    const done = await api("POST", "/api/store/{storeId}/stripe-payments/confirm", { params, body: { paymentIntentId: card.paymentIntentId } }).catch((err) => {
      throw new Error((err as Error).message || "Payment confirmation failed");
    });
    paid();
    if (done.orderStatus === "PAID") window.location.assign(base + "/orders/" + encodeURIComponent(props.orderId));
    else window.location.assign(back);
  }

  async function payPayPal() {
    const pp = await api("POST", "/api/store/{storeId}/paypal/create-order", {
      params,
      body: { orderId: props.orderId, amount: props.total, currency: props.currency },
    }).catch((err) => {
      throw new Error((err as Error).message || "Failed to create PayPal order");
    });
    if (!pp.approvalUrl) throw new Error("PayPal order created but approval URL is missing");
    paid();
    window.location.assign(pp.approvalUrl);
  }

  async function pay(e: FormEvent) {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setError("");
    try {
      if (method === "musepay") await payWallet();
      else if (method === "stripe") await payCard();
      else if (method === "paypal") await payPayPal();
      else throw new Error("Payment method not available");
    } catch (err) {
      // An error that is not the server's (a bug, a broken script) has
      // SPEC.md section 8's generic words.
      setError(err instanceof Error ? err.message || "Payment failed. Please try again." : "An unexpected error occurred");
      setBusy(false);
    }
  }

  const label = method === "paypal" ? "Pay with PayPal" : "Pay " + formatMoney(props.total, props.currency);
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
      {method === "stripe" && (
        <div className="card-form">
          {cardLoading && <p className="meta">Loading the card form...</p>}
          <div ref={cardEl} className="card-element" />
        </div>
      )}
      {method === "paypal" && <p className="meta">You will approve the payment on PayPal, then come back here.</p>}
      {error && (
        <p className="checkout-error" role="alert">
          <span aria-hidden="true" className="cross">✕</span> {error}
        </p>
      )}
      {method === "musepay" && short && props.methods.length === 1 && props.addFundsHref ? (
        <a className="button add-funds-link" href={props.addFundsHref}>Add funds</a>
      ) : (
        <button type="submit" className="button pay-button" disabled={busy || (method === "stripe" && hydrated && !card)}>
          {busy ? "Processing..." : label}
        </button>
      )}
    </form>
  );
}
