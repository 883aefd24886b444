import { formatMoney } from "../lib/format";

// OrderSummary is the money block of checkout and the order page (SPEC.md
// section 9): cents shown / 100, tax fixed at 0, the platform fee line only
// when above 0. Shipping is the order's (the app's shipping zones; 0 when
// it has none); null before the address is known ("At the Shipping step").
export function OrderSummary({ subtotal, shipping = 0, platformFee, total, currency }: { subtotal: number; shipping?: number | null; platformFee: number; total: number; currency: string }) {
  return (
    <dl className="order-summary">
      <dt>Subtotal</dt>
      <dd>{formatMoney(subtotal, currency)}</dd>
      <dt>Shipping</dt>
      <dd className="shipping-amount">{shipping === null ? "At the Shipping step" : formatMoney(shipping, currency)}</dd>
      <dt>Tax</dt>
      <dd>{formatMoney(0, currency)}</dd>
      {platformFee > 0 && (
        <>
          <dt>Platform fee</dt>
          <dd>{formatMoney(platformFee, currency)}</dd>
        </>
      )}
      <dt className="total">Total</dt>
      <dd className="total">{formatMoney(total, currency)}</dd>
    </dl>
  );
}
