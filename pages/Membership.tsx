import { Layout } from "./components/Layout";
import { displayTitle } from "./components/Header";
import { formatDate, formatMoney } from "./lib/format";
import type { PageProps, Tier, TiersData } from "./lib/types";
import { appBase } from "./lib/links";

type Props = PageProps<TiersData>;

// Membership: the app's tiers side by side in rank order, the member's own
// marked, with Join / Upgrade / Downgrade / Cancel. Every button is a plain
// form (server/membership_page.go), so the page works without JavaScript:
// Join, Upgrade and Downgrade are GET forms into the plan checkout with the
// cycle chosen, except for a membership that renews, whose Upgrade and
// Downgrade lead to the tier change's confirmation; Cancel posts to
// /membership/cancel.
export default function Membership(props: Props) {
  const app = props.app!;
  const d = props.data;
  const base = appBase(app);
  const signedIn = !!props.viewer.user;
  const current = d.current;
  const status = d.status;
  // The member's tier stays on the page when it is no longer on sale.
  const tiers: Tier[] = current && !d.tiers.some((t) => t.id === current.id) ? [...d.tiers, current].sort((a, b) => a.rank - b.rank) : d.tiers;
  const verb = (t: Tier) => (!current ? "Join" : t.rank > current.rank ? "Upgrade" : "Downgrade");
  const signIn = props.authUrl + "/authenticate/signin?app=" + encodeURIComponent(app.name);
  const quotes = d.quotes ?? [];
  const quoteOf = (t: Tier, cycle: "MONTHLY" | "YEARLY") => quotes.find((q) => q.tierId === t.id && q.cycle === cycle);
  // A price with the code applied: struck list price, then the offer.
  const priceLine = (t: Tier, cycle: "MONTHLY" | "YEARLY", list: number, per: string) => {
    const q = quoteOf(t, cycle);
    if (!q) {
      return (
        <>
          {formatMoney(list, t.currency)} <span className="meta">{per}</span>
        </>
      );
    }
    return (
      <>
        <s aria-label={"was " + formatMoney(list, t.currency)}>{formatMoney(list, t.currency)}</s> <strong className="offer-price">{formatMoney(q.price, t.currency)}</strong>{" "}
        <span className="meta">{per}</span> <span className="saving">{q.description}</span>
      </>
    );
  };
  // A tier's trial: its days, and for a trial only a card starts, what
  // the card is charged and when (if the viewer can still have it).
  const trialLine = (t: Tier) => {
    if (!d.trialAvailable) return t.trialDays + "-day free trial (you have had this app's trial" + (current ? ")" : ": joining pays now)");
    const ends = d.trialEnds?.[t.id];
    if (t.trialCardRequired && d.cardOffered && ends) {
      const first = t.monthlyPrice != null ? formatMoney(t.monthlyPrice, t.currency) : formatMoney(t.yearlyPrice ?? 0, t.currency);
      const other = t.monthlyPrice != null && t.yearlyPrice != null ? " (or " + formatMoney(t.yearlyPrice, t.currency) + " yearly)" : "";
      return "Start your " + t.trialDays + "-day free trial — card required, you are charged " + first + other + " on " + formatDate(ends) + " unless you cancel";
    }
    return t.trialDays + "-day free trial" + (t.trialCardRequired ? " · card required" : "");
  };
  const choose = (t: Tier, cycle: "MONTHLY" | "YEARLY", price: number) => {
    const label = verb(t) + (t.monthlyPrice != null && t.yearlyPrice != null ? (cycle === "YEARLY" ? " yearly" : " monthly") : "");
    if (d.changeable && current) {
      // A membership that renews moves between tiers (with the prorated
      // difference for an upgrade) and keeps its cycle: one button.
      if (d.cycle && cycle !== d.cycle) return null;
      return (
        <a className="button" href={base + "/membership/change/" + t.itemId} key={cycle} aria-label={verb(t) + " to " + t.name}>
          {verb(t)}
        </a>
      );
    }
    if (!signedIn) {
      return (
        <a className="button" href={signIn} key={cycle}>
          {label}
        </a>
      );
    }
    return (
      <form method="get" action={base + "/checkout/plan/" + t.itemId} key={cycle} className="tier-choose">
        <input type="hidden" name="cycle" value={cycle} />
        {quoteOf(t, cycle) && <input type="hidden" name="code" value={d.code} />}
        <button type="submit" className="button" aria-label={label + " " + t.name + " for " + formatMoney(quoteOf(t, cycle)?.price ?? price, t.currency)}>
          {label}
        </button>
      </form>
    );
  };
  return (
    <Layout props={props}>
      <div className="membership">
        <h1>{"Membership · " + displayTitle(app)}</h1>
        {d.notice && (
          <p className="notice" role="status">
            {d.notice}
          </p>
        )}
        {current && status && (
          <p className="membership-current">
            {"Your tier: "}
            <strong>{current.name}</strong>
            {status.trialUntil
              ? " · free trial until " + formatDate(status.trialUntil) +
                (status.cancelAtPeriodEnd
                  ? ", then it ends"
                  : status.renewedBy === "stripe"
                    ? ", then your card is charged " + formatMoney((d.cycle === "YEARLY" ? current.yearlyPrice : current.monthlyPrice) ?? 0, current.currency) + " unless you cancel"
                    : ", then it renews from your wallet")
              : status.currentPeriodEnd && (status.cancelAtPeriodEnd ? " · ends " : " · renews ") + formatDate(status.currentPeriodEnd)}
          </p>
        )}
        {d.error && (
          <p className="field-error" role="alert">
            {"✕ " + d.error}
          </p>
        )}
        {d.cardManaged && (
          <form method="post" action={base + "/membership/portal"} className="membership-portal">
            <button type="submit" className="button button-secondary">
              Manage card and invoices
            </button>
          </form>
        )}
        {d.paypalManaged && (
          <p className="meta membership-paypal">
            {status?.cancelAtPeriodEnd
              ? "Your PayPal subscription is cancelled. Join again when your membership ends."
              : "Your membership renews through PayPal: a change of tier is approved on PayPal, and an upgrade's prorated difference is paid there as a one-off payment."}
          </p>
        )}
        {d.paypalChange && (
          <p className="notice membership-paypal-change" role="status">
            {d.paypalChange.status === "REVISED"
              ? "Your upgrade to " + d.paypalChange.toName + " is approved on PayPal. "
              : "Your change to " + d.paypalChange.toName + " waits for your approval on PayPal. "}
            <a href={d.paypalChange.href}>
              {d.paypalChange.status === "REVISED"
                ? "Pay the " + formatMoney(d.paypalChange.charge, d.paypalChange.currency) + " difference to start it now"
                : "Approve it on PayPal"}
            </a>
            {d.paypalChange.status === "REVISED" ? " (unpaid, it starts with your next renewal)." : "."}
          </p>
        )}
        {current && d.next && status?.currentPeriodEnd && (
          <p className="membership-next">
            {"Moves to "}
            <strong>{d.next.name}</strong>
            {" on " + formatDate(status.currentPeriodEnd) + ". "}
            <a href={base + "/membership/change/" + current.itemId}>{"Keep " + current.name}</a>
          </p>
        )}
        {!current && <p className="meta">{signedIn ? "You follow this app for free. Join a tier to support it and see members' posts." : "Sign in to join."}</p>}
        {tiers.length === 0 && <p className="empty">No subscription plans available at the moment.</p>}
        <ol className="tiers">
          {tiers.map((t) => {
            const mine = current?.id === t.id;
            return (
              <li key={t.id} className={"tier" + (mine ? " tier-current" : "")} data-tier={t.name} aria-current={mine ? "true" : undefined}>
                <h2>{t.name}</h2>
                {mine && <p className="tier-badge">Your tier</p>}
                {t.monthlyPrice != null && <p className="price">{priceLine(t, "MONTHLY", t.monthlyPrice, "/ month")}</p>}
                {t.yearlyPrice != null && (
                  <p className="price">
                    {priceLine(t, "YEARLY", t.yearlyPrice, "/ year")}
                    {t.yearlySaving > 0 && (
                      <span className="saving">{" Save " + formatMoney(t.yearlySaving, t.currency) + " (" + t.yearlySavingPercent + "%)"}</span>
                    )}
                  </p>
                )}
                {t.trialDays > 0 && (
                  <p className="meta tier-trial">{trialLine(t)}</p>
                )}
                {t.description && <p className="meta">{t.description}</p>}
                {t.benefits.length > 0 && (
                  <ul className="plan-benefits" aria-label={"Benefits of " + t.name}>
                    {t.benefits.map((b, i) => (
                      <li key={i}>{b}</li>
                    ))}
                  </ul>
                )}
                {mine ? (
                  status &&
                  !(d.paypalManaged && status.cancelAtPeriodEnd) && (
                    <form method="post" action={base + "/membership/cancel"}>
                      <input type="hidden" name="cancel" value={status.cancelAtPeriodEnd ? "0" : "1"} />
                      <button type="submit" className="button button-secondary">
                        {status.cancelAtPeriodEnd ? "Keep membership" : "Cancel"}
                      </button>
                    </form>
                  )
                ) : d.changeRefused ? (
                  t.state === "ON_SALE" && <p className="meta tier-change-refused">{d.changeRefused}</p>
                ) : d.paypalManaged && !d.changeable ? null : t.state === "ON_SALE" && d.changeable && d.cycle && (d.cycle === "YEARLY" ? t.yearlyPrice : t.monthlyPrice) == null ? (
                  <p className="meta">{"Not offered " + (d.cycle === "YEARLY" ? "yearly" : "monthly") + ": join it when your membership ends."}</p>
                ) : t.state === "ON_SALE" ? (
                  <div className="tier-actions">
                    {t.monthlyPrice != null && choose(t, "MONTHLY", t.monthlyPrice)}
                    {t.yearlyPrice != null && choose(t, "YEARLY", t.yearlyPrice)}
                  </div>
                ) : null}
              </li>
            );
          })}
        </ol>
        {tiers.length > 0 && (
          <form method="get" action={base + "/membership"} className="offer-code">
            <label htmlFor="offer-code">Have a code?</label>
            <div className="offer-code-row">
              <input id="offer-code" name="code" defaultValue={d.code ?? ""} autoComplete="off" autoCapitalize="characters" spellCheck={false}
                aria-invalid={d.codeError ? "true" : undefined} aria-describedby={d.codeError ? "offer-code-error" : undefined} />
              <button type="submit" className="button button-secondary">
                Apply
              </button>
            </div>
            {d.codeError && (
              <p className="field-error" id="offer-code-error" role="alert">
                {"✕ " + d.codeError}
              </p>
            )}
            {d.code && quotes.length > 0 && (
              <p className="notice" role="status">
                {"Code " + d.code + ": " + quotes[0].description + "."}
              </p>
            )}
          </form>
        )}
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
      <title>{"Membership · " + (props.app ? displayTitle(props.app) : "Marquee")}</title>
    </>
  );
}
