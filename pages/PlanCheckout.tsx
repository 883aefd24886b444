import { Layout } from "./components/Layout";
import { displayTitle } from "./components/Header";
import { cycleLabel } from "./components/Plans";
import { formatDate, formatMoney } from "./lib/format";
import { methodLabel } from "./lib/orders";
import type { PageProps, PlanCheckoutData } from "./lib/types";
import { appBase } from "./lib/links";

type Props = PageProps<PlanCheckoutData>;

// PlanCheckout: one plan, paid from the member's wallet with one form post
// (server/subscriptions.go). Paying makes the member SUBSCRIBER until the
// end of the period; a current membership is extended, not replaced.
// payBy names the other ways to pay as a sentence says them.
const payBy: Record<string, string> = { stripe: "card", paypal: "PayPal" };

export default function PlanCheckout(props: Props) {
  const app = props.app!;
  const { balance, status, error, cycle, saving, current, quote, code, codeError, trialDays, cardTrial, trialChargeOn, trialUsed } = props.data;
  const plan = props.data.plan!;
  const listPrice = props.data.price;
  const price = quote ? quote.price : listPrice;
  const trial = trialDays > 0;
  const enough = trial || balance >= price;
  const verb = !current ? "Subscribe to" : current.itemId === plan.id ? "Renew" : "Change to";
  const base = appBase(app);
  return (
    <Layout props={props} hideFooter>
      <div className="plan-checkout">
        <h1>{verb === "Subscribe to" ? "Subscribe to " + displayTitle(app) : verb + " " + plan.name}</h1>
        <div className="plan">
          <h2>{plan.name}</h2>
          <p className="price">
            {quote && (
              <>
                <s aria-label={"was " + formatMoney(listPrice, plan.currency)}>{formatMoney(listPrice, plan.currency)}</s>{" "}
              </>
            )}
            {formatMoney(price, plan.currency)} <span className="meta">/ {cycleLabel(cycle)}</span>
            {quote && <span className="saving">{" Code " + quote.code + ": " + quote.description}</span>}
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
        {!cardTrial && (
          <p>
            Wallet balance: <strong>{formatMoney(balance, "USD")}</strong>
          </p>
        )}
        {trial && !cardTrial && (
          <p className="notice">
            {"Your first " + trialDays + " days are free. Then " + formatMoney(price, plan.currency) + " is taken from your wallet; without it you follow the app again. We mail you 3 days before the trial ends."}
          </p>
        )}
        {cardTrial && (
          <p className="notice trial-offer">
            {"Start your " + trialDays + "-day free trial — card required, you are charged " + formatMoney(price, plan.currency) +
              (trialChargeOn ? " on " + formatDate(trialChargeOn) : " when it ends") + " unless you cancel. We mail you 3 days before the trial ends."}
          </p>
        )}
        {trialUsed && <p className="meta trial-used">You have had this app's free trial, so joining pays now.</p>}
        {codeError && (
          <p className="field-error" role="alert">
            {"✕ " + codeError}
          </p>
        )}
        {cardTrial && (
          <form method="post" action={base + "/checkout/plan/" + plan.id} className="card-trial-form">
            <input type="hidden" name="cycle" value={cycle} />
            <input type="hidden" name="pay" value="card-trial" />
            {quote && <input type="hidden" name="code" value={quote.code} />}
            <button type="submit" className="button">
              {"Start " + trialDays + "-day free trial with card"}
            </button>
            <p className="meta">Stripe's secure page takes your card (it works without JavaScript here); nothing is charged today.</p>
          </form>
        )}
        {cardTrial && <p className="meta">The wallet cannot start this trial: it needs a card.</p>}
        {!enough && (
          <p className="field-error">
            {"Your wallet balance is too low for this plan. "}
            {props.data.follows && (
              <a className="add-funds-link" href={base + "/transactions?return=membership#add-funds"}>
                Add funds
              </a>
            )}
          </p>
        )}
        {!enough && !props.data.follows && (
          <form method="post" action={base + "/follow"} className="add-funds-follow">
            <input type="hidden" name="back" value="add-funds" />
            <button type="submit" className="button button-secondary">
              Follow and add funds
            </button>
          </form>
        )}
        {error && (
          <p className="field-error" role="alert">
            {"✕ " + error}
          </p>
        )}
        {!cardTrial && (
          <form method="post" action={base + "/checkout/plan/" + plan.id}>
            <input type="hidden" name="cycle" value={cycle} />
            {quote && <input type="hidden" name="code" value={quote.code} />}
            <button type="submit" className="button" disabled={!enough}>
              {trial ? "Start " + trialDays + "-day free trial" : "Pay " + formatMoney(price, plan.currency) + " with wallet"}
            </button>
          </form>
        )}
        {cardTrial && props.data.otherMethods.includes("paypal") && (
          <form method="post" action={base + "/checkout/plan/" + plan.id}>
            <input type="hidden" name="cycle" value={cycle} />
            <input type="hidden" name="pay" value="other" />
            {quote && <input type="hidden" name="code" value={quote.code} />}
            <button type="submit" className="button button-secondary">
              {"Pay " + formatMoney(price, plan.currency) + " now by PayPal (no free trial)"}
            </button>
          </form>
        )}
        {props.data.otherMethods.length > 0 && !trial && (
          <form method="post" action={base + "/checkout/plan/" + plan.id}>
            <input type="hidden" name="cycle" value={cycle} />
            <input type="hidden" name="pay" value="other" />
            {quote && <input type="hidden" name="code" value={quote.code} />}
            <button type="submit" className="button button-secondary">
              {"Pay " + formatMoney(price, plan.currency) + " by " + props.data.otherMethods.map((m) => payBy[m] ?? methodLabel(m)).join(" or ")}
            </button>
          </form>
        )}
        {!quote && (
          <form method="get" action={base + "/checkout/plan/" + plan.id} className="offer-code">
            <input type="hidden" name="cycle" value={cycle} />
            <label htmlFor="offer-code">Have a code?</label>
            <div className="offer-code-row">
              <input id="offer-code" name="code" defaultValue={code} autoComplete="off" spellCheck={false} />
              <button type="submit" className="button button-secondary">
                Apply
              </button>
            </div>
          </form>
        )}
        <p className="meta">Renews every {cycleLabel(cycle)} {cardTrial ? "by card" : "from your wallet"}. Cancel any time from your profile or <a href={base + "/membership"}>the membership page</a>.</p>
        <p>
          <a href={base || "/"}>{"Back to " + displayTitle(app)}</a>
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
