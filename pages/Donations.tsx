import { Layout } from "./components/Layout";
import { StudioNav } from "./components/StudioNav";
import { displayTitle } from "./components/Header";
import { formatDateTime, formatMoney } from "./lib/format";
import type { DonationView, PageProps } from "./lib/types";
import { appBase } from "./lib/links";

type Props = PageProps<{
  donations: DonationView[];
  totals: { count: number; amount: number; donors: number };
  pagination: { page: number; totalPages: number; hasNext: boolean };
}>;

// Donations: the creator's list of paid donations with totals.
export default function Donations(props: Props) {
  const app = props.app!;
  const { donations, totals, pagination } = props.data;
  const base = appBase(app) + "/donations";
  return (
    <Layout props={props}>
      <div className="donations studio">
        <StudioNav app={app} viewer={props.viewer} current="donations" />
        <h2>Donations</h2>
        <dl className="totals">
          <dt>Total received</dt>
          <dd data-testid="donations-total">{formatMoney(totals.amount, "USD")}</dd>
          <dt>Donations</dt>
          <dd>{totals.count}</dd>
          <dt>Supporters</dt>
          <dd>{totals.donors}</dd>
        </dl>
        {donations.length === 0 ? (
          <p className="empty">No donations yet.</p>
        ) : (
          <ul className="donation-list">
            {donations.map((d) => (
              <li key={d.id} className="donation">
                <strong>@{d.donor.username}</strong> <span className="price">{formatMoney(d.amount, d.currency)}</span>
                <span className="meta"> · {formatDateTime(d.processedAt ?? d.createdAt)}</span>
                {d.message && <p>{d.message}</p>}
              </li>
            ))}
          </ul>
        )}
        {pagination.totalPages > 1 && (
          <nav className="pager">
            {pagination.page > 1 && <a href={base + "?page=" + (pagination.page - 1)}>Previous</a>}
            <span>{"page " + pagination.page + " of " + pagination.totalPages}</span>
            {pagination.hasNext && <a href={base + "?page=" + (pagination.page + 1)}>Next</a>}
          </nav>
        )}
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  return (
    <>
      <title>{"Donations · " + (props.app ? displayTitle(props.app) : "Marquee")}</title>
      <meta name="robots" content="noindex" />
    </>
  );
}
