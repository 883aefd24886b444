import { Layout } from "./components/Layout";
import { storeGatePage } from "./components/StoreGate";
import { formatMoney } from "./lib/format";
import { appSeo, SeoHead } from "./lib/seo";
import type { PageProps, PaymentSuccessData } from "./lib/types";
import { appBase } from "./lib/links";

type Props = PageProps<PaymentSuccessData>;

// PaymentSuccess: where a payment lands (SPEC.md section 2): processing,
// 'Payment Processing Error' / 'Missing payment information', or 'Payment
// Successful!' with View Order Details and Continue Shopping.
export default function PaymentSuccess(props: Props) {
  const app = props.app!;
  const d = props.data;
  const base = appBase(app);
  const gate = storeGatePage(props, d.access);
  if (gate) return gate;
  const o = d.order;
  return (
    <Layout props={props}>
      <div className="state payment-result">
        {d.state === "success" && o && (
          <>
            <p className="result-mark ok" aria-hidden="true">✓</p>
            <h1>Payment Successful!</h1>
            <p>{"Order " + o.orderNumber + " · " + formatMoney(o.total, o.currency)}</p>
            <div className="form-actions centered">
              <a className="button" href={base + "/orders/" + o.id}>View Order Details</a>
              <a className="button button-secondary" href={base + "/store"}>Continue Shopping</a>
            </div>
          </>
        )}
        {d.state === "processing" && o && (
          <>
            <h1>Processing your payment...</h1>
            <p>{"Order " + o.orderNumber + " is waiting for the payment to be confirmed."}</p>
            {d.message && (
              <p className="checkout-error" role="alert">
                <span aria-hidden="true" className="cross">✕</span> {d.message}
              </p>
            )}
            <div className="form-actions centered">
              <a className="button" href={props.path + "?processor=" + encodeURIComponent(d.processor) + "&orderId=" + o.id}>Check again</a>
              <a className="button button-secondary" href={base + "/orders/" + o.id}>View Order Details</a>
            </div>
          </>
        )}
        {(d.state === "error" || d.state === "missing") && (
          <>
            <p className="result-mark bad" aria-hidden="true">✕</p>
            <h1>Payment Processing Error</h1>
            <p>{d.state === "missing" ? "Missing payment information" : d.message || "Payment processing failed"}</p>
            <div className="form-actions centered">
              <a className="button" href={base + "/orders"}>View My Orders</a>
              <a className="button button-secondary" href={base || "/"}>Continue Shopping</a>
            </div>
          </>
        )}
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  const seo = appSeo(props.app!, props, "/payment-success");
  seo.title = "Payment · " + seo.title;
  seo.noindex = true;
  return <SeoHead seo={seo} />;
}
