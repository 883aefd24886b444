import { Layout } from "./components/Layout";
import { displayTitle } from "./components/Header";
import { cycleLabel } from "./components/Plans";
import { formatDate, formatMoney } from "./lib/format";
import type { PageProps, PlanItem, SubscriptionStatus } from "./lib/types";

type Props = PageProps<{ plan: PlanItem; balance: number; status: SubscriptionStatus; error: string }>;

// PlanCheckout: one plan, paid from the member's wallet with one form post
// (server/subscriptions.go). Paying makes the member SUBSCRIBER until the
// end of the period; a current membership is extended, not replaced.
export default function PlanCheckout(props: Props) {
  const app = props.app!;
  const { plan, balance, status, error } = props.data;
  const enough = balance >= plan.price;
  const base = "/apps/" + app.name;
  return (
    <Layout props={props} hideFooter>
      <div className="plan-checkout">
        <h1>Subscribe to {displayTitle(app)}</h1>
        <div className="plan">
          <h2>{plan.name}</h2>
          <p className="price">
            {formatMoney(plan.price, plan.currency)} <span className="meta">/ {cycleLabel(plan.subscriptionPlan?.billingCycle)}</span>
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
        {status.hasValidSubscription && status.currentPeriodEnd && (
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
          <button type="submit" className="button" disabled={!enough}>
            {"Pay " + formatMoney(plan.price, plan.currency) + " with wallet"}
          </button>
        </form>
        <p className="meta">Renews every {cycleLabel(plan.subscriptionPlan?.billingCycle)} from your wallet. Cancel any time from your profile.</p>
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
