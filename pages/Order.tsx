import { Fragment } from "react";
import { Layout } from "./components/Layout";
import { storeGatePage } from "./components/StoreGate";
import { OrderLines } from "./components/OrderLines";
import { OrderSummary } from "./components/OrderSummary";
import { formatDateTime, formatMoney } from "./lib/format";
import { methodLabel, parseAddress, statusLabels } from "./lib/orders";
import { appSeo, SeoHead } from "./lib/seo";
import type { OrderData, OrderView, PageProps } from "./lib/types";
import { appBase } from "./lib/links";

type Props = PageProps<OrderData>;

// Order: items, info, shipping address, payment, notes, tracking, refund
// info and summary (SPEC.md section 2). A member sees only their own.
export default function Order(props: Props) {
  const app = props.app!;
  const d = props.data;
  const base = appBase(app);
  const gate = storeGatePage(props, d.access);
  if (gate) return gate;
  const o = d.order;
  if (!o) {
    return (
      <Layout props={props}>
        <div className="state state-error" role="alert">
          <h1>{props.status === 404 ? "Order not found" : "Failed to load order"}</h1>
          <a className="button" href={base + "/orders"}>My Orders</a>
        </div>
      </Layout>
    );
  }
  const addr = parseAddress(o);
  const when: [string, string | null][] = [
    ["Placed", o.createdAt],
    ["Paid", o.paidAt],
    ["Shipped", o.shippedAt],
    ["Delivered", o.deliveredAt],
    ["Cancelled", o.cancelledAt],
    ["Refunded", o.refundedAt],
  ];
  return (
    <Layout props={props}>
      <div className="order-page">
        <a className="back-button" href={d.canFulfil && o.buyer ? base + "/manage/orders" : base + "/orders"}>← Orders</a>
        <div className="order-card-head">
          <h1 className="page-title">{"Order " + o.orderNumber}</h1>
          <span className={"status status-" + o.status.toLowerCase()}>{statusLabels[o.status]}</span>
        </div>
        {d.notice && <p className="added-alert">{d.notice}</p>}
        {d.error && (
          <p className="checkout-error" role="alert"><span aria-hidden="true" className="cross">✕</span> {d.error}</p>
        )}
        <section>
          <h2>Items</h2>
          <OrderLines items={o.items} />
        </section>
        <section>
          <h2>Order Info</h2>
          <dl className="facts">
            {when.filter(([, t]) => t).map(([label, t]) => (
              <Fragment key={label}>
                <dt>{label}</dt>
                <dd>{formatDateTime(t!)}</dd>
              </Fragment>
            ))}
            {o.buyer && (
              <>
                <dt>Buyer</dt>
                <dd>{"@" + o.buyer.username}</dd>
              </>
            )}
          </dl>
        </section>
        {addr && (
          <section>
            <h2>Shipping Address</h2>
            <address className="address">
              {addr.firstName + " " + addr.lastName}
              <br />
              {addr.address}
              <br />
              {addr.city + ", " + addr.state + " " + addr.zipCode}
              <br />
              {addr.country}
              {addr.phone && (
                <>
                  <br />
                  {addr.phone}
                </>
              )}
            </address>
          </section>
        )}
        {o.trackingNumber && (
          <section>
            <h2>Tracking</h2>
            <p className="tracking">{"Tracking number: " + o.trackingNumber}</p>
          </section>
        )}
        <section>
          <h2>Payment</h2>
          <p className="payment-state">{methodLabel(o.paymentMethod) + " · " + paymentState(o)}</p>
        </section>
        {o.notes && (
          <section>
            <h2>Notes</h2>
            <p className="description">{o.notes}</p>
          </section>
        )}
        {(o.refundedAmount > 0 || o.status === "REFUNDED") && (
          <section className="refund-info">
            <h2>Refund</h2>
            {o.status === "REFUNDED" ? (
              <p>{"Refunded" + (o.refundedAt ? " on " + formatDateTime(o.refundedAt) : "") + (o.refundReason ? ": " + o.refundReason : "")}</p>
            ) : (
              <p>{"Refunded so far: " + formatMoney(o.refundedAmount, o.currency) + " of " + formatMoney(o.total, o.currency) + (o.refundReason ? " (" + o.refundReason + ")" : "")}</p>
            )}
          </section>
        )}
        {d.canRefund && (
          <section className="refund-form-section" aria-labelledby="refund-h">
            <h2 id="refund-h">Give a refund</h2>
            <p className="meta">{"Up to " + formatMoney(d.refundLeft, o.currency) + " can still be refunded, back to the buyer's " + refundTo(o.paymentMethod) + ". Refunding all of it takes back what the order gave (stock, downloads, tickets)."}</p>
            <form method="post" action={base + "/orders/" + o.id + "/refund"} className="refund-form">
              <label htmlFor="refund-amount">Amount ($)</label>
              <input id="refund-amount" name="amount" inputMode="decimal" pattern="[0-9]+([.][0-9]{1,2})?" placeholder={(d.refundLeft / 100).toFixed(2)} />
              <p className="meta">Leave empty to refund everything left.</p>
              <label htmlFor="refund-reason">Reason</label>
              <input id="refund-reason" name="reason" required maxLength={500} />
              <button type="submit" className="button button-secondary">Refund</button>
            </form>
          </section>
        )}
        <section>
          <h2>Summary</h2>
          <OrderSummary subtotal={o.subtotal} shipping={o.shipping} platformFee={o.platformFee} total={o.total} currency={o.currency} />
        </section>
        <div className="form-actions">
          {o.status === "PENDING" && !o.buyer && (
            <a className="button" href={base + "/checkout?orderId=" + o.id}>Pay Now</a>
          )}
          {d.canCancel && (
            <form method="post" action={base + "/orders/" + o.id + "/cancel"}>
              <button type="submit" className="button button-secondary">Cancel Order</button>
            </form>
          )}
          {d.canFulfil && <a className="button button-secondary" href={base + "/manage/orders"}>Manage Orders</a>}
        </div>
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  const seo = appSeo(props.app!, props, "/orders");
  seo.title = "Order · " + seo.title;
  seo.noindex = true;
  return <SeoHead seo={seo} />;
}

export function status(props: Props) {
  return props.status ?? 200;
}

// refundTo says where a refund's money goes.
function refundTo(method: string): string {
  if (method === "stripe") return "card";
  if (method === "paypal") return "PayPal account";
  return "wallet";
}

// paymentState words where the money is: a refund gives it back, so a
// refunded order no longer says "paid".
function paymentState(o: OrderView): string {
  if (o.status === "REFUNDED") return "refunded";
  if (o.status === "CANCELLED" && !o.paidAt) return "not paid";
  return o.paidAt ? "paid" : "not paid yet";
}
