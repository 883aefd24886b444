import { Layout } from "./components/Layout";
import { displayTitle } from "./components/Header";
import { cycleLabel } from "./components/Plans";
import { formatDate, formatMoney } from "./lib/format";
import type { PageProps, PlanCheckoutData } from "./lib/types";

type Props = PageProps<PlanCheckoutData>;

// PlanCheckout: one plan, paid from the member's wallet with one form post
// (server/subscriptions.go). Paying makes the member SUBSCRIBER until the
// end of the period; a current membership is extended, not replaced.
export default function PlanCheckout(props: Props) {
  const app = props.app!;
  const { balance, status, error, cycle, price, saving, current } = props.data;
  const plan = props.data.plan!;
  const enough = balance >= price;
  const verb = !current ? "Subscribe to" : current.itemId === plan.id ? "Renew" : "Change to";
  const base = "/apps/" + app.name;
  return (
    <Layout props={props} hideFooter>
      <div className="plan-checkout">
        <h1>{verb === "Subscribe to" ? "Subscribe to " + displayTitle(app) : verb + " " + plan.name}</h1>
        <div className="plan">
          <h2>{plan.name}</h2>
          <p className="price">
            {formatMoney(price, plan.currency)} <span className="meta">/ {cycleLabel(cycle)}</span>
            {saving > 0 && <span className="saving">{" Save " + formatMoney(saving, plan.currency)}</span>}
          </p>
          {plan.description && <p className="meta">{plan.description}</p>}
          {plan.benefits && plan.benefits.length > 0 && (
            <ul className="plan-benefits" aria-label="Benefits">
              {plan.benefits.map((b, i) => (
                <li key={i}>{b}</li>
              ))}
            </ul>
          )}
        </div>
        {status && status.hasValidSubscription && status.currentPeriodEnd && (
          <p className="notice">
            {"You are a member until " + formatDate(status.currentPeriodEnd) + "; paying now adds one more period."}
          </p>
        )}
        <h2>Payment</h2>
        <p>
          Wallet balance: <strong>{formatMoney(balance, "USD")}</strong>
        </p>
        {!enough && <p className="field-error">Your wallet balance is too low for this plan.</p>}
        {error && (
          <p className="field-error" role="alert">
            {"✕ " + error}
          </p>
        )}
        <form method="post" action={base + "/checkout/plan/" + plan.id}>
          <input type="hidden" name="cycle" value={cycle} />
          <button type="submit" className="button" disabled={!enough}>
            {"Pay " + formatMoney(price, plan.currency) + " with wallet"}
          </button>
        </form>
        <p className="meta">Renews every {cycleLabel(cycle)} from your wallet. Cancel any time from your profile or <a href={base + "/membership"}>the membership page</a>.</p>
        <p>
          <a href={base}>{"Back to " + displayTitle(app)}</a>
        </p>
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  return (
    <>
      <title>{"Subscribe · " + (props.app ? displayTitle(props.app) : "Marquee")}</title>
      <meta name="robots" content="noindex" />
    </>
  );
}
