import { Layout } from "./components/Layout";
import { StoreGate, discountPercent, stockLabel } from "./components/StoreGate";
import { FULL_WIDTH, Img } from "./lib/img";
import { appSeo, SeoHead } from "./lib/seo";
import { formatDate, formatMoney, truncate } from "./lib/format";
import type { ItemData, PageProps } from "./lib/types";
import { Island } from "./lib/Island";
import AddToCart from "../islands/AddToCart";
import { appBase } from "./lib/links";

type Props = PageProps<ItemData>;

// StoreItem is one item: gallery, price, stock, description and the
// AddToCart island (a plain form underneath). Visitors and non-followers see
// the item with the store's access message instead of the form.
export default function StoreItem(props: Props) {
  const app = props.app!;
  const d = props.data;
  const base = appBase(app);
  if (d.access === "disabled") {
    return (
      <Layout props={props} hideFooter>
        <StoreGate access={d.access} props={props} />
      </Layout>
    );
  }
  const item = d.item;
  if (!item) {
    return (
      <Layout props={props} hideFooter>
        <a className="back-button" href={base + "/store"}>← Store</a>
        <div className="state state-error" role="alert">
          <h1>Item Not Found</h1>
          <p>This item could not be loaded.</p>
          <a className="button" href={base + "/store"}>Back to store</a>
        </div>
      </Layout>
    );
  }
  const off = discountPercent(item.price, item.comparePrice);
  const stock = stockLabel(item.stock);
  return (
    <Layout props={props} hideFooter>
      <div className="item-top">
        <a className="back-button" href={base + "/store"}>← Store</a>
        {d.access === "ok" && <a className="button button-secondary cart-link" href={base + "/cart"}>Cart <span className="cart-count">{d.cartCount}</span></a>}
      </div>
      <article className="item-detail">
        {item.media.length > 0 && (
          <ul className="gallery" aria-label="Images">
            {item.media.map((m, i) => (
              <li key={m.id}>
                <Img media={m} alt={i === 0 ? item.name : ""} sizes={FULL_WIDTH} box={[720, 720]} priority={i === 0} />
              </li>
            ))}
          </ul>
        )}
        <div className="item-body">
          <h1>{item.name}</h1>
          <p className="price">
            {formatMoney(item.price, item.currency)}
            {off > 0 && (
              <>
                <s className="compare">{formatMoney(item.comparePrice!, item.currency)}</s>
                <span className="discount">{off + "% off"}</span>
              </>
            )}
          </p>
          <p className={"stock " + stock.className}>{stock.text}</p>
          {d.event && (
            <p className="ticket-event">
              {"Ticket for "}
              <a href={base + "/events/" + d.event.id}>{d.event.name}</a>
              {" · " + formatDate(d.event.startDate)}
            </p>
          )}
          {props.viewer.permissions.canManageStore && (
            <p><a href={base + "/store/items/" + item.id + "/edit"}>Edit item</a></p>
          )}
          {d.access === "ok" ? (
            <Island name="AddToCart" component={AddToCart}
              props={{ appName: app.name, storeId: d.storeId, item, access: d.access, inCart: d.inCart, added: d.added, chooseVariant: !!d.chooseVariant }} />
          ) : (
            <StoreGate access={d.access} props={props} inline />
          )}
          <p className="description">{item.description}</p>
          {item.tags.length > 0 && (
            <ul className="tags">
              {item.tags.map((t) => (
                <li key={t.id}>{t.name}</li>
              ))}
            </ul>
          )}
        </div>
      </article>
    </Layout>
  );
}

export function head(props: Props) {
  const app = props.app!;
  const item = props.data.item;
  const seo = appSeo(app, props, props.data.item ? "/store/items/" + props.data.item.id : "/store");
  if (!item) {
    seo.title = "Item Not Found · " + seo.title;
    seo.noindex = true;
    return <SeoHead seo={seo} />;
  }
  seo.title = item.name + " · " + seo.title;
  seo.description = truncate(item.description, 160) || seo.description;
  seo.type = "product";
  if (item.media[0]) seo.image = item.media[0].signedUrl;
  const inStock = item.stock === null || item.stock > 0;
  seo.jsonLd = {
    "@context": "https://schema.org",
    "@type": "Product",
    name: item.name,
    description: item.description,
    sku: item.sku || undefined,
    image: item.media.map((m) => m.signedUrl),
    offers: {
      "@type": "Offer",
      url: seo.url,
      priceCurrency: item.currency,
      price: (item.price / 100).toFixed(2),
      availability: inStock ? "https://schema.org/InStock" : "https://schema.org/OutOfStock",
    },
  };
  return <SeoHead seo={seo} />;
}

export function status(props: Props) {
  return props.status ?? 200;
}
