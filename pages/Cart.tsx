import { Layout } from "./components/Layout";
import { ErrorState } from "./components/ErrorState";
import { storeGatePage } from "./components/StoreGate";
import { appSeo, SeoHead } from "./lib/seo";
import type { CartData, PageProps } from "./lib/types";
import { Island } from "./lib/Island";
import CartView from "../islands/CartView";
import { appBase } from "./lib/links";

type Props = PageProps<CartData>;

// Cart: the member's server cart, rendered in full so it works without
// JavaScript; the CartView island adds in-place updates and the offline
// fallback.
export default function Cart(props: Props) {
  const app = props.app!;
  const d = props.data;
  const base = appBase(app);
  const gate = storeGatePage(props, d.access);
  if (gate) return gate;
  return (
    <Layout props={props}>
      <a className="back-button" href={base + "/store"}>← Store</a>
      <h1 className="page-title">Cart</h1>
      {props.error && !d.cart ? (
        <ErrorState message={props.error} retryHref={props.path} />
      ) : (
        <Island name="CartView" component={CartView} props={{ appName: app.name, storeId: d.storeId, cart: d.cart, notice: d.notice }} />
      )}
    </Layout>
  );
}

export function head(props: Props) {
  const seo = appSeo(props.app!, props, "/cart");
  seo.title = "Cart · " + seo.title;
  seo.noindex = true;
  return <SeoHead seo={seo} />;
}
