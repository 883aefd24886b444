import { Layout } from "./components/Layout";
import { StudioNav } from "./components/StudioNav";
import { storeGatePage } from "./components/StoreGate";
import { OrderLines } from "./components/OrderLines";
import { formatDateTime, formatMoney } from "./lib/format";
import { actionLabels, methodLabel, parseAddress, statusLabels } from "./lib/orders";
import { appSeo, SeoHead } from "./lib/seo";
import type { OrderView, OrdersData, PageProps } from "./lib/types";
import { appBase } from "./lib/links";

type Props = PageProps<OrdersData>;

// Actions offers one form per move the status machine allows (the server
// sends them as `next`); PAID is never a button: payments set it.
function Actions({ o, action, filter }: { o: OrderView; action: string; filter: string }) {
  const moves = o.next.filter((s) => s !== "PAID");
  if (moves.length === 0) return null;
  return (
    <div className="fulfil-actions">
      {moves.map((to) => (
        <form key={to} method="post" action={action} className={"fulfil-form fulfil-" + to.toLowerCase()}>
          <input type="hidden" name="status" value={to} />
          <input type="hidden" name="filter" value={filter} />
          {to === "SHIPPED" && (
            <input name="trackingNumber" required maxLength={100} placeholder="Tracking number" aria-label="Tracking number" />
          )}
          {to === "REFUNDED" && <input name="reason" required maxLength={500} placeholder="Refund reason" aria-label="Refund reason" />}
          <button type="submit" className={"button" + (to === "CANCELLED" || to === "REFUNDED" ? " button-secondary" : "")}>
            {actionLabels[to] ?? to}
          </button>
        </form>
      ))}
    </div>
  );
}

// ManageOrders: the fulfilment screen for the creator and admins: every
// order, filtered by status, with the actions its status allows.
export default function ManageOrders(props: Props) {
  const app = props.app!;
  const d = props.data;
  const base = appBase(app);
  const gate = storeGatePage(props, d.access);
  if (gate) return gate;
  const p = d.pagination;
  const filterHref = (s: string) => base + "/manage/orders" + (s ? "?status=" + s : "");
  const pageHref = (n: number) => filterHref(d.status) + (d.status ? "&" : "?") + "page=" + n;
  return (
    <Layout props={props}>
      <div className="orders manage-orders">
        <StudioNav app={app} viewer={props.viewer} current="orders" />
        <h2 className="page-title">Orders</h2>
        <nav className="status-filters" aria-label="Filter by status">
          <a href={filterHref("")} className={"chip" + (d.status === "" ? " selected" : "")}>All</a>
          {d.statuses.map((s) => (
            <a key={s} href={filterHref(s)} className={"chip" + (d.status === s ? " selected" : "")}>{statusLabels[s]}</a>
          ))}
        </nav>
        {d.notice && <p className="added-alert">{d.notice}</p>}
        {d.error && (
          <p className="checkout-error" role="alert"><span aria-hidden="true" className="cross">✕</span> {d.error}</p>
        )}
        {props.error ? (
          <div className="state state-error" role="alert">
            <p>Failed to load orders</p>
            <a className="button" href={props.path}>Try Again</a>
          </div>
        ) : d.orders.length === 0 ? (
          <p className="state">No orders here</p>
        ) : (
          <ul className="order-cards">
            {d.orders.map((o) => {
              const addr = parseAddress(o);
              return (
                <li key={o.id} className="order-card manage-card" data-order={o.orderNumber}>
                  <div className="order-card-head">
                    <a href={base + "/orders/" + o.id}><strong>{o.orderNumber}</strong></a>
                    <span className={"status status-" + o.status.toLowerCase()}>{statusLabels[o.status]}</span>
                  </div>
                  <p className="meta">
                    {formatDateTime(o.createdAt) + " · " + (o.buyer ? "@" + o.buyer.username : "") + " · " + methodLabel(o.paymentMethod) + " · " + formatMoney(o.total, o.currency)}
                  </p>
                  <OrderLines items={o.items} />
                  {addr && <p className="meta">{"Ship to " + addr.firstName + " " + addr.lastName + ", " + addr.address + ", " + addr.city + ", " + addr.state + " " + addr.zipCode + ", " + addr.country}</p>}
                  {o.trackingNumber && <p className="tracking">{"Tracking number: " + o.trackingNumber}</p>}
                  {o.refundReason && <p className="meta">{"Refund reason: " + o.refundReason}</p>}
                  <Actions o={o} action={base + "/manage/orders/" + o.id} filter={d.status} />
                </li>
              );
            })}
          </ul>
        )}
        {p && p.totalPages > 1 && (
          <nav className="pager">
            {p.hasPrev ? <a href={pageHref(p.page - 1)}>Previous</a> : <span className="disabled">Previous</span>}
            <span>{p.page + " of " + p.totalPages}</span>
            {p.hasNext ? <a href={pageHref(p.page + 1)}>Next</a> : <span className="disabled">Next</span>}
          </nav>
        )}
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  const seo = appSeo(props.app!, props, "/manage/orders");
  seo.title = "Manage Orders · " + seo.title;
  seo.noindex = true;
  return <SeoHead seo={seo} />;
}
