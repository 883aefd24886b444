import { formatDateTime } from "../lib/format";
import type { PageProps, StudioData } from "../lib/types";
import { FieldError, cls } from "./fields";
import { appBase } from "../lib/links";

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

const postStates: Record<string, string> = { DRAFT: "Draft", SCHEDULED: "Scheduled", PUBLISHED: "Published" };

// NewsletterSection is the studio's newsletter screen (issue 44): the
// settings, each post that was or will be mailed with how it went, a test
// mail of any of them to oneself, and the addresses every send skips.
export function NewsletterSection({ props }: { props: PageProps<StudioData> }) {
  const d = props.data;
  const n = d.newsletter!;
  const base = appBase(props.app!);
  const s = n.settings;
  return (
    <>
      <section className="studio-card" aria-labelledby="newsletter-settings-h">
        <h2 id="newsletter-settings-h">Newsletter settings</h2>
        <p className="meta">
          A post you publish with "Send by e-mail" goes to every member who may read it and has not switched the
          newsletter off. Mails come from the site's address in your app's name.
        </p>
        {d.form === "newsletter" && d.error && <p className="form-error" role="alert">{d.error}</p>}
        <form method="post" action={base + "/studio/newsletter"} className="studio-form">
          <label className={cls(d, "senderName")}>
            Sender name
            <input name="senderName" defaultValue={s.senderName ?? ""} maxLength={80} placeholder={props.app!.settings.basic.displayName} />
            <FieldError d={d} name="senderName" />
          </label>
          <label className={cls(d, "replyTo")}>
            Replies go to
            <input name="replyTo" type="email" defaultValue={s.replyTo ?? ""} maxLength={254} autoComplete="email" />
            <span className="hint">Leave empty and replies go nowhere.</span>
            <FieldError d={d} name="replyTo" />
          </label>
          <label className="check">
            <input type="checkbox" name="defaultOn" value="on" defaultChecked={s.defaultOn} />
            Tick "Send by e-mail" on new posts
          </label>
          <div className="field-row">
            <label className={cls(d, "digestDay")}>
              Weekly digest day
              <select name="digestDay" defaultValue={String(s.digestDay)}>
                {WEEKDAYS.map((w, i) => <option key={w} value={i}>{w}</option>)}
              </select>
              <FieldError d={d} name="digestDay" />
            </label>
            <label className={cls(d, "digestHour")}>
              Hour
              <select name="digestHour" defaultValue={String(s.digestHour)}>
                {Array.from({ length: 24 }, (_, h) => <option key={h} value={h}>{String(h).padStart(2, "0") + ":00"}</option>)}
              </select>
              <FieldError d={d} name="digestHour" />
            </label>
          </div>
          <label className={cls(d, "timeZone")}>
            Time zone
            <input name="timeZone" defaultValue={n.timeZone} placeholder="UTC" spellCheck={false} autoComplete="off" />
            <span className="hint">Such as Europe/Lisbon or America/New_York: scheduled posts and the digest use it.</span>
            <FieldError d={d} name="timeZone" />
          </label>
          <button type="submit" className="button">Save</button>
        </form>
      </section>
      <section className="studio-card" aria-labelledby="newsletter-posts-h">
        <h2 id="newsletter-posts-h">Posts by e-mail</h2>
        {d.form === "newsletter-test" && d.error && <p className="form-error" role="alert">{d.error}</p>}
        {n.posts.length === 0 ? (
          <p className="meta">No drafts, scheduled or mailed posts yet.</p>
        ) : (
          <ul className="newsletter-posts">
            {n.posts.map((p) => (
              <li key={p.messageId} className="newsletter-post" data-state={p.state}>
                <div className="newsletter-post-head">
                  <a href={base + "/posts/" + p.messageId}>{p.excerpt || "(no text)"}</a>
                  <span className="meta">
                    {postStates[p.state] + (p.state === "SCHEDULED" && p.publishAt ? " for " + formatDateTime(p.publishAt) + " UTC" : "") +
                      (p.state !== "PUBLISHED" ? (p.newsletter ? " · will be mailed" : " · not mailed") : "")}
                  </span>
                </div>
                {p.recipients > 0 && (
                  <dl className="newsletter-counts">
                    <div><dt>Recipients</dt><dd>{p.recipients}</dd></div>
                    <div><dt>Sent</dt><dd>{p.sent}</dd></div>
                    {p.pending > 0 && <div><dt>Sending</dt><dd>{p.pending}</dd></div>}
                    <div><dt>Failed</dt><dd>{p.failed}</dd></div>
                    <div><dt>Undeliverable</dt><dd>{p.skipped}</dd></div>
                    <div><dt>Unsubscribed</dt><dd>{p.unsubscribes}</dd></div>
                  </dl>
                )}
                <form method="post" action={base + "/studio/newsletter/test"}>
                  <input type="hidden" name="messageId" value={p.messageId} />
                  <button type="submit" className="button button-secondary">{"Send a test to " + n.testTo}</button>
                </form>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section className="studio-card" aria-labelledby="undeliverable-h">
        <h2 id="undeliverable-h">Undeliverable addresses</h2>
        {n.undeliverable.length === 0 ? (
          <p className="meta">Every member's address takes mail.</p>
        ) : (
          <>
            <p className="meta">These members' mail servers refused mail for good several times; every send skips them until they change their address.</p>
            <ul className="undeliverable-list">
              {n.undeliverable.map((u) => (
                <li key={u.email}>
                  <strong>{u.username}</strong>{" · " + u.email + " · " + u.bounces + " refusals, last " + formatDateTime(u.updatedAt) + " UTC"}
                  <p className="meta">{u.lastError}</p>
                </li>
              ))}
            </ul>
          </>
        )}
      </section>
    </>
  );
}
