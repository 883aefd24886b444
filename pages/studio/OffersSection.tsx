import { formatDate, formatMoney } from "../lib/format";
import type { PageProps, StudioData } from "../lib/types";
import { FieldError, cls } from "./fields";
import { appBase } from "../lib/links";

// OffersSection is the studio's offers editor (issue 40 items 5 and 6):
// the app's codes with their redemptions (how many and who) and a form for
// a new code; plain forms, so it works without JavaScript.
export function OffersSection({ props }: { props: PageProps<StudioData> }) {
  const d = props.data;
  const o = d.offers!;
  const base = appBase(props.app!) + "/studio/offers";
  const mine = d.form === "offer";
  const fd: StudioData = mine ? d : { ...d, fields: {} };
  const e = o.edit ?? { code: "", kind: "percent", value: "", duration: "ONCE", durationMonths: "", expiresOn: "", maxRedemptions: "", tierId: "" };
  return (
    <>
      <section className="studio-card" aria-labelledby="offers-h">
        <h2 id="offers-h">Offer codes</h2>
        <p className="meta">
          {"Members type a code on "}
          <a href={appBase(props.app!) + "/membership"}>the membership page</a>
          {" and pay less: once, for the first months, or for ever. Each member uses a code once."}
        </p>
        {o.offers.length === 0 && <p className="empty">No codes yet.</p>}
        <ul className="card-list offer-list">
          {o.offers.map((x) => (
            <li key={x.id} className={"card offer-card" + (x.active && !x.expired ? "" : " archived")} data-code={x.code}>
              <div className="plan-head">
                <strong>{x.code}</strong>
                <span>{x.description}</span>
              </div>
              <p className="meta">
                {(x.active ? (x.expired ? "Expired" : "Active") : "Deactivated") +
                  " · " + x.redemptions + (x.maxRedemptions > 0 ? " of " + x.maxRedemptions : "") + (x.redemptions === 1 ? " redemption" : " redemptions") +
                  (x.expiresAt ? " · until " + formatDate(x.expiresAt) : "") + (x.tierName ? " · " + x.tierName + " only" : " · any tier")}
              </p>
              {x.redeemedBy.length > 0 && (
                <details className="offer-redeemers">
                  <summary>{"Who redeemed it"}</summary>
                  <ul>
                    {x.redeemedBy.map((r) => (
                      <li key={r.userId}>
                        {"@" + (r.username || r.userId) + " · " + formatMoney(r.discount, "USD") + " off · " + formatDate(r.at)}
                      </li>
                    ))}
                  </ul>
                </details>
              )}
              <form method="post" action={base + "/" + x.id + "/active"} className="cancel-form">
                <input type="hidden" name="active" value={x.active ? "0" : "1"} />
                <button type="submit" className="link-button">{x.active ? "Deactivate" : "Activate again"}</button>
              </form>
            </li>
          ))}
        </ul>
      </section>
      <section className="studio-card" aria-labelledby="offer-new-h">
        <h2 id="offer-new-h">New code</h2>
        {mine && d.error && (
          <p className="form-error" role="alert">
            {d.error}
          </p>
        )}
        <form method="post" action={base} className="studio-form offer-form">
          <label className={cls(fd, "code")}>
            Code
            <input name="code" required maxLength={32} defaultValue={e.code} placeholder="WELCOME50" autoCapitalize="characters" spellCheck={false} />
            <FieldError d={fd} name="code" />
          </label>
          <div className="field-row">
            <label className={cls(fd, "kind")}>
              Discount
              <select name="kind" defaultValue={e.kind}>
                <option value="percent">Percent off</option>
                <option value="amount">Dollars off</option>
              </select>
            </label>
            <label className={cls(fd, "value") + " " + cls(fd, "percentOff") + " " + cls(fd, "amountOff")}>
              How much
              <input name="value" required inputMode="decimal" defaultValue={e.value} placeholder="50" />
              <FieldError d={fd} name="value" />
              <FieldError d={fd} name="percentOff" />
              <FieldError d={fd} name="amountOff" />
            </label>
          </div>
          <div className="field-row">
            <label className={cls(fd, "duration")}>
              For
              <select name="duration" defaultValue={e.duration}>
                <option value="ONCE">The first payment</option>
                <option value="REPEATING">The first months</option>
                <option value="FOREVER">Every payment</option>
              </select>
            </label>
            <label className={cls(fd, "durationMonths")}>
              Months (first months)
              <input name="durationMonths" inputMode="numeric" defaultValue={e.durationMonths} placeholder="1" />
              <FieldError d={fd} name="durationMonths" />
            </label>
          </div>
          <div className="field-row">
            <label className={cls(fd, "expiresOn")}>
              Last day (optional)
              <input name="expiresOn" type="date" defaultValue={e.expiresOn} />
              <FieldError d={fd} name="expiresOn" />
            </label>
            <label className={cls(fd, "maxRedemptions")}>
              Limit (optional)
              <input name="maxRedemptions" inputMode="numeric" defaultValue={e.maxRedemptions} placeholder="no limit" />
              <FieldError d={fd} name="maxRedemptions" />
            </label>
          </div>
          <label className={cls(fd, "tierId")}>
            Tier
            <select name="tierId" defaultValue={e.tierId}>
              <option value="">Any tier</option>
              {o.tiers.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
            <FieldError d={fd} name="tierId" />
          </label>
          <button type="submit" className="button">
            Create code
          </button>
        </form>
      </section>
    </>
  );
}
