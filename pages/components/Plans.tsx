import { formatMoney } from "../lib/format";
import type { PlanItem } from "../lib/types";
import { appPath } from "../../islands/lib/links";

export function cycleLabel(cycle: string | undefined): string {
  return cycle === "YEARLY" ? "year" : "month";
}

// Plans is the gated screen's list (SPEC.md section 8): each plan with its
// price per period and a Subscribe button that leads to the plan checkout.
export function Plans({ plans, appName, signedIn, authUrl, error }: { plans: PlanItem[]; appName: string; signedIn: boolean; authUrl: string; error?: string }) {
  if (error) return <p className="field-error" role="alert">{"Error loading subscription options: " + error}</p>;
  if (plans.length === 0) return <p className="empty">No subscription plans available at the moment.</p>;
  return (
    <>
    <ul className="plans">
      {plans.map((p) => (
        <li key={p.id} className="plan">
          <h3>{p.name}</h3>
          <p className="price">
            {formatMoney(p.price, p.currency)} <span className="meta">/ {cycleLabel(p.subscriptionPlan?.billingCycle)}</span>
          </p>
          {p.description && <p className="meta">{p.description}</p>}
          {p.benefits && p.benefits.length > 0 && (
            <ul className="plan-benefits" aria-label={"Benefits of " + p.name}>
              {p.benefits.map((b, i) => (
                <li key={i}>{b}</li>
              ))}
            </ul>
          )}
          <a
            className="button"
            href={
              signedIn
                ? appPath(appName) + "/checkout/plan/" + p.id
                : authUrl + "/authenticate/signin?app=" + encodeURIComponent(appName)
            }
          >
            Subscribe
          </a>
        </li>
      ))}
    </ul>
    <p className="meta">
      <a href={appPath(appName) + "/membership"}>Compare tiers</a>
    </p>
    </>
  );
}
