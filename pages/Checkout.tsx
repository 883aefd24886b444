import { Layout } from "./components/Layout";
import { ErrorState } from "./components/ErrorState";
import { storeGatePage } from "./components/StoreGate";
import { OrderLines } from "./components/OrderLines";
import { OrderSummary } from "./components/OrderSummary";
import { formatMoney } from "./lib/format";
import { Img } from "./lib/img";
import { appSeo, SeoHead } from "./lib/seo";
import type { CheckoutData, PageProps } from "./lib/types";
import { Island } from "./lib/Island";
import CheckoutPayment from "../islands/CheckoutPayment";
import { appBase } from "./lib/links";

type Props = PageProps<CheckoutData>;

function Steps({ d }: { d: CheckoutData }) {
  return (
    <ol className="checkout-steps">
      {d.steps.map((s, i) => (
        <li key={s.key} className={"step " + s.state}>
          {s.state === "done" && s.href ? (
            <a href={s.href}>
              <span className="step-num">✓</span> {s.label}
            </a>
          ) : (
            <span aria-current={s.state === "current" ? "step" : undefined}>
              <span className="step-num">{i + 1}</span> {s.label}
            </span>
          )}
        </li>
      ))}
    </ol>
  );
}

function CrossError({ message }: { message?: string }) {
  if (!message) return null;
  return (
    <p className="checkout-error" role="alert">
      <span aria-hidden="true" className="cross">✕</span> {message}
    </p>
  );
}

// Checkout: Review Cart, Shipping (only with a PHYSICAL item) and Payment
// (SPEC.md sections 2 and 4). Every step is a plain page with a real form;
// leaving Review Cart makes the order, so stock is held while the member
// types their address. The footer is hidden here (pages/lib/footer.ts).
export default function Checkout(props: Props) {
  const app = props.app!;
  const d = props.data;
  const base = appBase(app);
  const gate = storeGatePage(props, d.access);
  if (gate) return gate;
  if (props.error) {
    return (
      <Layout props={props}>
        <h1 className="page-title">Checkout</h1>
        <ErrorState message={props.error} retryHref={base + "/cart"} />
      </Layout>
    );
  }
  const o = d.order;
  // The wallet is the only way to pay and it cannot cover total: the
  // member is offered "Add funds" instead of a button that would fail.
  const onlyWallet = d.payment.methods.length === 1 && d.payment.methods[0] === "musepay";
  const walletShort = (total: number) => onlyWallet && d.walletBalance < total;
  const nextLabel = (shipping: boolean) => (shipping ? "Continue to Shipping" : "Continue to Payment");
  return (
    <Layout props={props}>
      <div className="checkout">
        <a className="back-button" href={base + "/cart"}>← Cart</a>
        <h1 className="page-title">Checkout</h1>
        <Steps d={d} />
        {d.step === "review" && !o && (() => {
          const cart = d.cart;
          if (!cart || cart.items.length === 0) {
            return (
              <div className="state">
                <p>Your cart is empty</p>
                {d.pending && (
                  <p>
                    <a className="button" href={base + "/checkout?orderId=" + d.pending.id}>
                      {"Pay for order " + d.pending.orderNumber + " (" + formatMoney(d.pending.total, d.pending.currency) + ")"}
                    </a>
                  </p>
                )}
                <a className="button button-secondary" href={base + "/store"}>Continue Shopping</a>
              </div>
            );
          }
          const physical = cart.items.some((l) => l.storeItem.type === "PHYSICAL");
          return (
            <section className="checkout-step">
              <h2>Review Cart</h2>
              <CrossError message={d.error} />
              <ul className="order-lines">
                {cart.items.map((l) => (
                  <li key={l.id} className={"order-line" + (l.available ? "" : " unavailable")}>
                    {l.storeItem.media[0] ? (
                      <Img media={l.storeItem.media[0]} alt="" sizes="56px" box={[56, 56]} />
                    ) : (
                      <span className="item-placeholder tiny" />
                    )}
                    <div className="order-line-body">
                      <span className="order-line-name">{l.storeItem.name}</span>
                      {l.selectedVariants.length > 0 && <p className="meta">{l.selectedVariants.map((v) => v.name + ": " + v.value).join(", ")}</p>}
                      <p className="meta">{"Qty " + l.quantity + " × " + formatMoney(l.price, l.currency)}</p>
                      {!l.available && <p className="stock-out">Not available as it stands: change it in your cart</p>}
                    </div>
                    <span className="line-total">{formatMoney(l.lineTotal, l.currency)}</span>
                  </li>
                ))}
              </ul>
              <OrderSummary subtotal={cart.totals.subtotal} shipping={physical ? null : 0} platformFee={0} total={cart.totals.subtotal} currency={cart.totals.currency} />
              {walletShort(cart.totals.subtotal) ? (
                <div className="wallet-short" role="status">
                  <p>
                    {"Your wallet holds " + formatMoney(d.walletBalance, cart.totals.currency) + ", less than this order's " +
                      formatMoney(cart.totals.subtotal, cart.totals.currency) + ". Add funds to your wallet to pay for it."}
                  </p>
                  <a className="button add-funds-link" href={base + "/transactions?return=checkout#add-funds"}>Add funds</a>
                </div>
              ) : (
              <form method="post" action={base + "/checkout"} className="checkout-form">
                <input type="hidden" name="cartId" value={cart.id} />
                <input type="hidden" name="paymentMethod" value={d.payment.defaultMethod || "musepay"} />
                <label>
                  Notes (optional)
                  <textarea name="notes" rows={2} maxLength={1000} placeholder="Anything the creator should know" />
                </label>
                <button type="submit" className="button">{nextLabel(physical)}</button>
              </form>
              )}
            </section>
          );
        })()}
        {d.step === "review" && o && (
          <section className="checkout-step">
            <h2>Review Cart</h2>
            <p className="meta">{"Order " + o.orderNumber + " is waiting for payment."}</p>
            <OrderLines items={o.items} />
            <OrderSummary subtotal={o.subtotal} shipping={o.needsShipping && !o.shippingAddress ? null : o.shipping} platformFee={o.platformFee} total={o.total} currency={o.currency} />
            <a className="button" href={base + "/checkout?orderId=" + o.id + "&step=" + (o.needsShipping ? "shipping" : "payment")}>
              {nextLabel(o.needsShipping)}
            </a>
          </section>
        )}
        {d.step === "shipping" && o && (
          <section className="checkout-step">
            <h2>Shipping</h2>
            <CrossError message={d.error} />
            <form method="post" action={base + "/checkout/shipping"} className="checkout-form shipping-form">
              <input type="hidden" name="orderId" value={o.id} />
              <div className="row">
                <label>First name<input name="firstName" required autoComplete="given-name" defaultValue={d.address.firstName} /></label>
                <label>Last name<input name="lastName" required autoComplete="family-name" defaultValue={d.address.lastName} /></label>
              </div>
              <label>Address<input name="address" required autoComplete="street-address" defaultValue={d.address.address} /></label>
              <div className="row">
                <label>City<input name="city" required autoComplete="address-level2" defaultValue={d.address.city} /></label>
                <label>State<input name="state" required autoComplete="address-level1" defaultValue={d.address.state} /></label>
              </div>
              <div className="row">
                <label>ZIP code<input name="zipCode" autoComplete="postal-code" defaultValue={d.address.zipCode} /></label>
                <label>
                  Country
                  <select name="country" autoComplete="country" defaultValue={d.address.country || "US"}>
                    {d.countries.map((c) => (
                      <option key={c.code} value={c.code}>{c.name}</option>
                    ))}
                  </select>
                </label>
              </div>
              <label>Phone (optional)<input name="phone" type="tel" autoComplete="tel" defaultValue={d.address.phone ?? ""} /></label>
              <button type="submit" className="button">Continue to Payment</button>
            </form>
            <ShippingRates rates={d.rates} currency={o.currency} />
          </section>
        )}
        {d.step === "payment" && o && (
          <section className="checkout-step">
            <h2>Payment</h2>
            <p className="meta">{"Order " + o.orderNumber}</p>
            <OrderSummary subtotal={o.subtotal} shipping={o.shipping} platformFee={o.platformFee} total={o.total} currency={o.currency} />
            {d.payment.methods.length === 0 ? (
              <CrossError message="No payment method is available right now." />
            ) : (
              <Island
                name="CheckoutPayment"
                component={CheckoutPayment}
                props={{
                  appName: app.name,
                  storeId: d.storeId,
                  orderId: o.id,
                  total: o.total,
                  currency: o.currency,
                  walletBalance: d.walletBalance,
                  methods: d.payment.methods,
                  addFundsHref: base + "/transactions?return=checkout#add-funds",
                  publishableKey: d.payment.stripe.publishableKey,
                  error: d.error,
                }}
              />
            )}
            <form method="post" action={base + "/orders/" + o.id + "/cancel"} className="cancel-form">
              <button type="submit" className="link-button">Cancel order</button>
            </form>
          </section>
        )}
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  const seo = appSeo(props.app!, props, "/checkout");
  seo.title = "Checkout · " + seo.title;
  seo.noindex = true;
  return <SeoHead seo={seo} />;
}

// ShippingRates lists what this order pays to ship to each of the app's
// zones; the payment step's summary then shows the one for the address.
function ShippingRates({ rates, currency }: { rates: CheckoutData["rates"]; currency: string }) {
  if (rates.length === 0) {
    return <p className="meta shipping-rates">Shipping is free.</p>;
  }
  return (
    <section className="shipping-rates" aria-labelledby="rates-h">
      <h3 id="rates-h">Shipping for this order</h3>
      <ul>
        {rates.map((r) => (
          <li key={r.zone}>
            <strong>{r.zone + ": " + (r.amount === 0 ? "free" : formatMoney(r.amount, currency))}</strong>
            {r.freeOver > 0 && r.amount > 0 && <span className="meta">{" (free over " + formatMoney(r.freeOver, currency) + ")"}</span>}
            <p className="meta">{r.countries.join(", ")}</p>
          </li>
        ))}
      </ul>
    </section>
  );
}
