import { Layout } from "./components/Layout";
import { displayTitle } from "./components/Header";
import { cycleLabel } from "./components/Plans";
import { formatDate, formatMoney } from "./lib/format";
import { appBase } from "./lib/links";
import type { PageProps, TierChangeData } from "./lib/types";

type Props = PageProps<TierChangeData>;

// TierChange: the confirmation of a move between tiers
// (server/membership_change.go). An upgrade says what it costs now (the
// prorated difference) and from the next period; a downgrade says the
// member keeps their tier until the period ends. One form post confirms.
export default function TierChange(props: Props) {
  const app = props.app!;
  const { change, balance, error, code, codeError } = props.data;
  const base = appBase(app);
  const back = (
    <p>
      <a href={base + "/membership"}>Back to the tiers</a>
    </p>
  );
  if (!change) {
    return (
      <Layout props={props} hideFooter>
        <div className="plan-checkout">
          <h1>Change tier</h1>
          <p className="field-error" role="alert">
            {"✕ " + (error || "There is nothing to change.")}
          </p>
          {back}
        </div>
      </Layout>
    );
  }
  const upgrade = change.direction === "UPGRADE";
  const keep = change.direction === "KEEP";
  const wallet = change.renewedBy === "musepay";
  const paypal = change.renewedBy === "paypal";
  const short = upgrade && wallet && balance < change.charge;
  const per = " / " + cycleLabel(change.cycle);
  const title = upgrade ? "Upgrade to " + change.to.name : keep ? "Keep " + change.to.name : "Downgrade to " + change.to.name;
  return (
    <Layout props={props} hideFooter>
      <div className="plan-checkout">
        <h1>{title}</h1>
        <dl className="tier-change">
          <dt>Your tier now</dt>
          <dd>{change.from.name}</dd>
          <dt>{keep ? "You keep" : "New tier"}</dt>
          <dd>{change.to.name}</dd>
          {upgrade && (
            <>
              <dt>Pay now</dt>
              <dd>
                <strong data-testid="upgrade-charge">{formatMoney(change.charge, change.currency)}</strong>
                {change.offer && <s className="meta">{" " + formatMoney(change.offer.listPrice, change.currency)}</s>}
                <span className="meta">{" for the rest of the period, until " + formatDate(change.periodEnd)}</span>
                {change.offer && <span className="offer-applied">{" · " + change.offer.code + ": " + change.offer.description}</span>}
              </dd>
            </>
          )}
          <dt>{upgrade || keep ? "Then" : "From " + formatDate(change.periodEnd)}</dt>
          <dd>
            {change.nextCharge !== change.price
              ? formatMoney(change.nextCharge, change.currency) + per + " while the code runs, then " + formatMoney(change.price, change.currency) + per
              : formatMoney(change.price, change.currency) + per}
          </dd>
        </dl>
        {upgrade && (
          <form method="get" action={base + "/membership/change/" + change.to.itemId} className="offer-code">
            <label htmlFor="tier-code">Have a code?</label>
            <div className="offer-code-row">
              <input id="tier-code" name="code" defaultValue={code ?? ""} autoComplete="off" spellCheck={false}
                aria-invalid={codeError ? true : undefined} aria-describedby={codeError ? "tier-code-error" : undefined} />
              <button type="submit" className="button button-secondary">
                Apply
              </button>
            </div>
            {codeError && (
              <p className="field-error" id="tier-code-error" role="alert">
                {"✕ " + codeError}
              </p>
            )}
          </form>
        )}
        {upgrade && !paypal && <p>{"Your new tier starts as soon as you confirm."}</p>}
        {paypal && (
          <p className="meta tier-change-paypal">
            {upgrade
              ? "Your membership renews through PayPal. You approve the new tier on PayPal" +
                (change.offer ? ", at the code's price for the renewals it covers," : "") +
                " then pay the difference there as a one-off PayPal payment (PayPal's subscriptions do not prorate); your new tier starts as soon as it is paid. Without it, the new tier starts at your next renewal."
              : "Your membership renews through PayPal: you approve the change on PayPal, which bills the new price from your next renewal."}
          </p>
        )}
        {change.direction === "DOWNGRADE" && <p>{"You keep " + change.from.name + " until " + formatDate(change.periodEnd) + "; nothing is charged now."}</p>}
        {upgrade && wallet && (
          <p>
            Wallet balance: <strong>{formatMoney(balance, change.currency)}</strong>
          </p>
        )}
        {upgrade && !wallet && !paypal && <p className="meta">The difference is charged to the card your membership renews with.</p>}
        {short && (
          <p className="field-error">
            {"Your wallet balance is too low for this upgrade. "}
            <a className="add-funds-link" href={base + "/transactions#add-funds"}>Add funds</a>
          </p>
        )}
        {error && (
          <p className="field-error" role="alert">
            {"✕ " + error}
          </p>
        )}
        <form method="post" action={base + "/membership/change/" + change.to.itemId}>
          {change.offer && <input type="hidden" name="code" value={change.offer.code} />}
          <button type="submit" className="button" disabled={short}>
            {paypal
              ? upgrade
                ? "Continue to PayPal · pay " + formatMoney(change.charge, change.currency)
                : "Continue to PayPal"
              : upgrade
                ? "Confirm upgrade · pay " + formatMoney(change.charge, change.currency)
                : keep
                  ? "Keep " + change.to.name
                  : "Confirm downgrade"}
          </button>
        </form>
        {back}
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  return (
    <>
      <title>{"Change tier · " + (props.app ? displayTitle(props.app) : "Marquee")}</title>
      <meta name="robots" content="noindex" />
    </>
  );
}
