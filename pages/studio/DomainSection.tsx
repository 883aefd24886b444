import { formatDateTime } from "../lib/format";
import type { PageProps, StudioData } from "../lib/types";
import { FieldError, cls } from "./fields";
import { appBase } from "../lib/links";

const STATE_LABEL: Record<string, string> = { pending: "Waiting for DNS", verified: "Verified", failed: "Not verified yet" };

// DomainSection is the studio's custom domain screen (issue 42 item 3):
// add a domain, see the DNS records to create (a TXT record that proves
// it is yours, and a CNAME or A/AAAA records that point it here), Check
// now, and remove. Plain forms, so it works without JavaScript.
export function DomainSection({ props }: { props: PageProps<StudioData> }) {
  const d = props.data;
  const dom = d.domain!;
  const v = dom.domain;
  const base = appBase(props.app!) + "/studio/domain";
  return (
    <>
      <section className="studio-card" aria-labelledby="domain-h">
        <h2 id="domain-h">Custom domain</h2>
        <p className="meta">
          Serve your app at an address of your own, such as fans.yourname.com: every page, link, feed and mail of the
          app then uses it. Until it is verified, your app stays at its address on this site.
        </p>
        {d.form === "domain" && d.error && <p className="form-error" role="alert">{d.error}</p>}
        <form method="post" action={base} className="studio-form">
          <label className={cls(d, "domain")}>
            {v ? "Replace with another domain" : "Domain"}
            <input name="domain" inputMode="url" autoComplete="off" spellCheck={false} autoCapitalize="none"
              placeholder="fans.example.com" defaultValue={dom.typed ?? ""} required />
            <FieldError d={d} name="domain" />
          </label>
          <button type="submit" className="button">{v ? "Use this domain" : "Add domain"}</button>
        </form>
      </section>
      {v && (
        <section className="studio-card" aria-labelledby="domain-state-h" data-testid="domain-state">
          <h2 id="domain-state-h">{v.domain}</h2>
          <p>
            <strong className={"domain-state domain-" + v.state}>{STATE_LABEL[v.state] ?? v.state}</strong>
            {v.state === "verified" && (
              <>
                {" · "}
                <a href={v.url}>{v.url}</a>
              </>
            )}
          </p>
          {v.lastError && v.state !== "verified" && <p className="meta" data-testid="domain-error">{"Last check: " + v.lastError}</p>}
          {v.checkedAt && <p className="meta">{"Checked " + formatDateTime(v.checkedAt)}</p>}
          <h3>DNS records to create</h3>
          <p className="meta">At the company that runs your domain's DNS, create these records. The TXT record proves the domain is yours; the others send its visitors here{v.records.some((r) => r.either) ? " (a CNAME, or the A/AAAA records where a CNAME is not allowed, as at the root of a domain)" : ""}.</p>
          <ul className="dns-records">
            {v.records.map((r) => (
              <li key={r.type + r.value}>
                <strong className="dns-type">{r.type}</strong>
                <span className="meta">Name</span>
                <code>{r.name}</code>
                <span className="meta">Value</span>
                <code>{r.value}</code>
              </li>
            ))}
          </ul>
          <div className="studio-actions">
            {v.state !== "verified" && (
              <form method="post" action={base + "/check"}>
                <button type="submit" className="button">Check now</button>
              </form>
            )}
            <form method="post" action={base + "/remove"}>
              <button type="submit" className="button button-danger">Remove domain</button>
            </form>
          </div>
        </section>
      )}
    </>
  );
}
