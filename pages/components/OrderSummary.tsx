import { formatMoney } from "../lib/format";

// OrderSummary is the money block of checkout and the order page (SPEC.md
// section 9): cents shown / 100, tax and shipping fixed at 0, the platform
// fee line only when above 0.
export function OrderSummary({ subtotal, platformFee, total, currency }: { subtotal: number; platformFee: number; total: number; currency: string }) {
  return (
    <dl className="order-summary">
      <dt>Subtotal</dt>
      <dd>{formatMoney(subtotal, currency)}</dd>
      <dt>Shipping</dt>
      <dd>{formatMoney(0, currency)}</dd>
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
