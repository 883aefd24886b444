import { Layout } from "./components/Layout";
import { storeGatePage } from "./components/StoreGate";
import { ErrorState } from "./components/ErrorState";
import { formatDateTime, formatMoney } from "./lib/format";
import { appSeo, SeoHead } from "./lib/seo";
import type { PageProps, WalletData } from "./lib/types";
import { Island } from "./lib/Island";
import AddFunds from "../islands/AddFunds";
import { appBase } from "./lib/links";

type Props = PageProps<WalletData>;

const kindLabels: Record<string, string> = { CREDIT: "Added to wallet", PAYMENT: "Payment", REFUND: "Refund", DONATION: "Donation" };

// Transactions: the member's wallet in this app, balance and every
// movement with the balance after it.
// backTo is where Add funds leads back to, by where the member came from.
const backTo: Record<string, { path: string; label: string }> = {
  checkout: { path: "/checkout", label: "Back to Checkout" },
  donate: { path: "/donate", label: "Back to Donate" },
  membership: { path: "/membership", label: "Back to Membership" },
};

export default function Transactions(props: Props) {
  const app = props.app!;
  const d = props.data;
  const base = appBase(app);
  const gate = storeGatePage(props, d.access);
  if (gate) return gate;
  const w = d.wallet;
  const p = d.pagination;
  const f = d.addFunds;
  return (
    <Layout props={props}>
      <div className="transactions">
        <a className="back-button" href={base + "/orders"}>← Orders</a>
        <h1 className="page-title">Wallet</h1>
        {props.error || !w ? (
          <ErrorState message={props.error || "Failed to load transactions"} retryHref={props.path} />
        ) : (
          <>
            <div className="wallet-balance">
              <span className="meta">Balance</span>
              <strong>{formatMoney(w.balance, w.currency)}</strong>
            </div>
            {f.added > 0 && (
              <p className="notice" role="status">
                {formatMoney(f.added, w.currency) + " added to your wallet."}
              </p>
            )}
            {f.notice && (
              <p className="notice" role="status">
                {f.notice}
              </p>
            )}
            {f.return && (
              <p>
                <a className="button button-secondary back-to" href={base + backTo[f.return].path}>
                  {backTo[f.return].label}
                </a>
              </p>
            )}
            <section className="add-funds" id="add-funds">
              <h2>Add funds</h2>
              <Island
                name="AddFunds"
                component={AddFunds}
                props={{
                  appName: app.name,
                  storeId: d.storeId,
                  amounts: f.amounts,
                  methods: f.methods,
                  currency: w.currency,
                  publishableKey: f.publishableKey,
                  returnTo: f.return,
                  card: f.card ? { topupId: f.card.topupId, amount: f.card.amount, clientSecret: f.card.clientSecret } : null,
                  error: f.error,
                }}
              />
            </section>
            {w.movements.length === 0 ? (
              <p className="state">No transactions yet</p>
            ) : (
              <ul className="movements">
                {w.movements.map((m) => (
                  <li key={m.id} className="movement">
                    <div>
                      <span className="movement-kind">{kindLabels[m.kind] ?? m.kind}</span>
                      <p className="meta">
                        {formatDateTime(m.createdAt)}
                        {m.memo ? " · " + m.memo : ""}
                      </p>
                      {m.orderId && <a href={base + "/orders/" + m.orderId}>View order</a>}
                    </div>
                    <div className="movement-amounts">
                      <strong className={m.amount < 0 ? "out" : "in"}>{(m.amount > 0 ? "+" : "") + formatMoney(m.amount, m.currency)}</strong>
                      <span className="meta">{"Balance " + formatMoney(m.balanceAfter, m.currency)}</span>
                    </div>
                  </li>
                ))}
              </ul>
            )}
            {p.totalPages > 1 && (
              <nav className="pager">
                {p.hasPrev ? <a href={"?page=" + (p.page - 1)}>Previous</a> : <span className="disabled">Previous</span>}
                <span>{p.page + " of " + p.totalPages}</span>
                {p.hasNext ? <a href={"?page=" + (p.page + 1)}>Next</a> : <span className="disabled">Next</span>}
              </nav>
            )}
          </>
        )}
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  const seo = appSeo(props.app!, props, "/transactions");
  seo.title = "Wallet · " + seo.title;
  seo.noindex = true;
  return <SeoHead seo={seo} />;
}
