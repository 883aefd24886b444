import { Layout } from "./components/Layout";
import { ErrorState } from "./components/ErrorState";
import { discountPercent, storeGatePage } from "./components/StoreGate";
import { Img } from "./lib/img";
import { listSeo, SeoHead } from "./lib/seo";
import { formatMoney, truncate } from "./lib/format";
import type { ItemView, PageProps, StoreData } from "./lib/types";
import { appBase } from "./lib/links";

type Props = PageProps<StoreData>;

const TYPES = [
  ["", "All types"],
  ["PHYSICAL", "Physical"],
  ["DIGITAL", "Digital"],
  ["SERVICE", "Service"],
];

// Store is the grid. Filters are a GET form and pages are links, so it all
// works without JavaScript; submitting the form drops `page`, which resets
// to page 1 (SPEC.md section 4).
export default function Store(props: Props) {
  const app = props.app!;
  const d = props.data;
  const base = appBase(app);
  const gate = storeGatePage(props, d.access);
  if (gate) return gate;
  const f = d.filters ?? { type: "", min: "", max: "", inStock: false, search: "", tags: "" };
  const p = d.pagination;
  const query = (page: number) => {
    // goja has no URLSearchParams: build the query by hand.
    const q: string[] = [];
    const set = (k: string, v: string) => q.push(k + "=" + encodeURIComponent(v));
    if (f.search) set("search", f.search);
    if (f.type) set("type", f.type);
    if (f.min) set("min", f.min);
    if (f.max) set("max", f.max);
    if (f.inStock) set("inStock", "true");
    if (f.tags) set("tags", f.tags);
    if (p.limit && p.limit !== 20) set("limit", String(p.limit));
    if (page > 1) set("page", String(page));
    const s = q.join("&");
    return base + "/store" + (s ? "?" + s : "");
  };
  return (
    <Layout props={props}>
      <div className="store">
        <div className="store-head">
          <h1>Store</h1>
          <nav className="store-actions">
            {props.viewer.permissions.canManageStore && (
              <a className="button button-secondary" href={base + "/store/items/new"}>New Item</a>
            )}
            {props.viewer.permissions.canManageStore && (
              <a className="button button-secondary" href={base + "/manage/orders"}>Fulfil</a>
            )}
            <a className="button button-secondary" href={base + "/membership"}>Membership</a>
            <a className="button button-secondary" href={base + "/orders"}>Orders</a>
            <a className="button" href={base + "/cart"} aria-label={"Cart, " + d.cartCount + " items"}>
              {"Cart "}<span className="cart-count">{d.cartCount}</span>
            </a>
          </nav>
        </div>
        {/* On a phone the filters fold behind a Filters button (details/
            summary, no JavaScript); open while one is on; a desktop always
            shows them. */}
        <details className="filters-fold" open={Boolean(f.search || f.type || f.min || f.max || f.inStock) || undefined}>
        <summary className="button button-secondary filters-toggle">Filters</summary>
        <form className="store-filters" method="get" action={base + "/store"}>
          <input type="search" name="search" defaultValue={f.search} placeholder="Search items" aria-label="Search items" />
          <select name="type" defaultValue={f.type} aria-label="Type">
            {TYPES.map(([v, label]) => (
              <option key={v} value={v}>{label}</option>
            ))}
          </select>
          <input type="number" name="min" min="0" step="0.01" defaultValue={f.min} placeholder="Min $" aria-label="Minimum price" />
          <input type="number" name="max" min="0" step="0.01" defaultValue={f.max} placeholder="Max $" aria-label="Maximum price" />
          <label className="check">
            <input type="checkbox" name="inStock" value="true" defaultChecked={f.inStock} /> In stock only
          </label>
          {f.tags && <input type="hidden" name="tags" value={f.tags} />}
          <button type="submit" className="button">Apply</button>
          <a href={base + "/store"} className="reset">Reset</a>
        </form>
        </details>
        {props.error ? (
          <ErrorState message={props.error} retryHref={props.path} />
        ) : d.items.length === 0 ? (
          <p className="empty state">No items found</p>
        ) : (
          <>
          <h2 className="visually-hidden">Items</h2>
          <ul className="item-grid store-grid">
            {d.items.map((item, i) => (
              <StoreCard key={item.id} item={item} base={base} priority={i < FIRST_ROW} />
            ))}
          </ul>
          </>
        )}
        {p && p.totalPages > 1 && (
          <nav className="pager" aria-label="Pages">
            {p.hasPrev ? <a className="button button-secondary" href={query(p.page - 1)} rel="prev">Previous</a> : <span className="button button-secondary disabled" aria-disabled="true">Previous</span>}
            <span className="pager-status">{"page " + p.page + " of " + p.totalPages}</span>
            {p.hasNext ? <a className="button button-secondary" href={query(p.page + 1)} rel="next">Next</a> : <span className="button button-secondary disabled" aria-disabled="true">Next</span>}
          </nav>
        )}
      </div>
    </Layout>
  );
}

// FIRST_ROW: the cards of the first screen (a desktop row, two phone rows)
// load eagerly and first: they are the store's largest paint. The rest wait
// until they are near.
const FIRST_ROW = 4;

function StoreCard({ item, base, priority }: { item: ItemView; base: string; priority: boolean }) {
  const image = item.media[0];
  const off = discountPercent(item.price, item.comparePrice);
  return (
    <li className="card item-card">
      <a href={base + "/store/items/" + item.id}>
        {image ? <Img media={image} alt="" sizes="(max-width: 720px) 50vw, (max-width: 1023px) 230px, 260px" box={[260, 260]} priority={priority} /> : <span className="item-placeholder" />}
        <h3>{item.name}</h3>
        <p className="meta">{truncate(item.description, 80)}</p>
        <p className="price">
          {formatMoney(item.price, item.currency)}
          {off > 0 && <s className="compare">{formatMoney(item.comparePrice!, item.currency)}</s>}
        </p>
        {item.stock === 0 && <p className="stock-out">Out of stock</p>}
      </a>
    </li>
  );
}

export function head(props: Props) {
  const seo = listSeo(props.app!, props, "/store", "Store", props.data?.pagination?.page);
  return <SeoHead seo={seo} />;
}
