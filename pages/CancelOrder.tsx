import { Layout } from "./components/Layout";
import { appSeo, SeoHead } from "./lib/seo";
import type { PageProps } from "./lib/types";
import { appBase } from "./lib/links";

type Props = PageProps<{ orderId: string }>;

// CancelOrder: the buyer left a redirecting payment (PayPal) before paying.
// The order stays PENDING until paid or expired.
export default function CancelOrder(props: Props) {
  const app = props.app!;
  const base = appBase(app);
  return (
    <Layout props={props}>
      <div className="state payment-result">
        <h1>Payment Cancelled</h1>
        <p>Your payment was cancelled and nothing was charged.</p>
        <div className="form-actions centered">
          <a className="button" href={base || "/"}>Continue Shopping</a>
          <a className="button button-secondary" href={base + "/orders"}>View My Orders</a>
        </div>
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  const seo = appSeo(props.app!, props, "/cancel_order");
  seo.title = "Payment cancelled · " + seo.title;
  seo.noindex = true;
  return <SeoHead seo={seo} />;
}
