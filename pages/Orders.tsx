import { Layout } from "./components/Layout";
import { storeGatePage } from "./components/StoreGate";
import { formatDate, formatMoney } from "./lib/format";
import { itemCount, methodLabel, statusLabels } from "./lib/orders";
import { appSeo, SeoHead } from "./lib/seo";
import type { OrdersData, PageProps } from "./lib/types";
import { appBase } from "./lib/links";

type Props = PageProps<OrdersData>;

// Orders: the member's own orders as cards (SPEC.md section 2): number,
// date, status label, items, total and payment method.
export default function Orders(props: Props) {
  const app = props.app!;
  const d = props.data;
  const base = appBase(app);
  const gate = storeGatePage(props, d.access);
  if (gate) return gate;
  const p = d.pagination;
  return (
    <Layout props={props}>
      <div className="orders">
        <a className="back-button" href={base + "/store"}>← Store</a>
        <div className="store-head">
          <h1 className="page-title">My Orders</h1>
          <a className="button button-secondary" href={base + "/transactions"}>Wallet</a>
        </div>
        {props.error ? (
          <div className="state state-error" role="alert">
            <p>Failed to load orders</p>
            <a className="button" href={props.path}>Try Again</a>
          </div>
        ) : d.orders.length === 0 ? (
          <div className="state">
            <p>No orders yet</p>
            <a className="button" href={base + "/store"}>Continue Shopping</a>
          </div>
        ) : (
          <ul className="order-cards">
            {d.orders.map((o) => (
              <li key={o.id}>
                <a className="order-card" href={base + "/orders/" + o.id}>
                  <div className="order-card-head">
                    <strong>{o.orderNumber}</strong>
                    <span className={"status status-" + o.status.toLowerCase()}>{statusLabels[o.status]}</span>
                  </div>
                  <p className="meta">{formatDate(o.createdAt) + " · " + methodLabel(o.paymentMethod)}</p>
                  <p className="order-card-items">
                    {o.items.map((it) => it.storeItem.name + (it.quantity > 1 ? " ×" + it.quantity : "")).join(", ")}
                  </p>
                  <p className="order-card-total">
                    <span className="meta">{itemCount(o) + (itemCount(o) === 1 ? " item" : " items")}</span>
                    <strong>{formatMoney(o.total, o.currency)}</strong>
                  </p>
                </a>
              </li>
            ))}
          </ul>
        )}
        {p && p.totalPages > 1 && (
          <nav className="pager">
            {p.hasPrev ? <a href={"?page=" + (p.page - 1)}>Previous</a> : <span className="disabled">Previous</span>}
            <span>{p.page + " of " + p.totalPages}</span>
            {p.hasNext ? <a href={"?page=" + (p.page + 1)}>Next</a> : <span className="disabled">Next</span>}
          </nav>
        )}
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  const seo = appSeo(props.app!, props, "/orders");
  seo.title = "Orders · " + seo.title;
  seo.noindex = true;
  return <SeoHead seo={seo} />;
}
