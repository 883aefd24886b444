import { Layout } from "./components/Layout";
import { StudioNav } from "./components/StudioNav";
import { displayTitle } from "./components/Header";
import { formatDateTime } from "./lib/format";
import type { ModerationData, PageProps, QueueItem } from "./lib/types";
import { appBase } from "./lib/links";

type Props = PageProps<ModerationData>;


const TARGET_LABELS: Record<string, string> = {
  POST: "Post",
  COMMENT: "Comment",
  STORY: "Story",
  EVENT: "Event",
  MEMBER: "Member",
};

const HIDDEN_LABELS: Record<string, string> = {
  REPORTS: "Hidden by reports until reviewed",
  MODERATOR: "Hidden by a moderator",
  PENDING: "Waiting for approval (new account with links)",
};

// The actions on one target as one plain form: the reason and the length
// of a ban or silence are shared, each button posts its own action. Works
// without JavaScript and comes back here with what happened.
function ItemActions(props: { app: string; item: QueueItem }) {
  const t = props.item.target;
  const button = (action: string, label: string, danger?: boolean) => (
    <button type="submit" name="action" value={action} className={danger ? "button button-danger" : "button button-secondary"} data-action={action}>
      {label}
    </button>
  );
  return (
    <form method="post" action={"/apps/" + props.app + "/studio/moderation"} className="mod-actions">
      <input type="hidden" name="targetType" value={t.type} />
      <input type="hidden" name="targetId" value={t.id} />
      <div className="mod-fields">
        <input type="text" name="reason" placeholder="Reason (kept in the audit log)" aria-label="Reason" maxLength={1000} />
        <select name="days" aria-label="Ban or silence for">
          <option value="1">1 day</option>
          <option value="7">7 days</option>
          <option value="30">30 days</option>
          <option value="0">For good</option>
        </select>
      </div>
      <div className="mod-buttons">
        {props.item.count > 0 && button("DISMISS", "Dismiss")}
        {t.type !== "MEMBER" && !t.hidden && button("HIDE", "Hide")}
        {t.hidden === "PENDING" && button("APPROVE", "Approve")}
        {t.hidden && t.hidden !== "PENDING" && button("UNHIDE", "Show again")}
        {t.type !== "MEMBER" && button("DELETE", "Delete", true)}
        {button("WARN", "Warn author")}
        {button("SILENCE", "Silence author")}
        {button("BAN", "Ban author", true)}
      </div>
    </form>
  );
}

// Moderation: the studio's review queue (grouped by target, with the
// reports' count and reasons), the bans and silences in force, the rules,
// and the audit log.
export default function Moderation(props: Props) {
  const app = props.app!;
  const d = props.data;
  const base = appBase(app) + "/studio/moderation";
  return (
    <Layout props={props} hideFooter>
      <div className="studio moderation-page">
        <StudioNav app={app} viewer={props.viewer} current="moderation" title={props.viewer.permissions.canManage ? "Studio" : "Moderation"} />
        {d.done && (
          <p className="notice" role="status" data-testid="moderation-done">
            {d.done}
          </p>
        )}
        {d.error && (
          <p className="field-error" role="alert">
            {d.error}
          </p>
        )}

        <section aria-labelledby="queue-title">
          <h2 id="queue-title">{"Review queue (" + d.queue.length + ")"}</h2>
          {d.queue.length === 0 ? (
            <p className="empty">Nothing to review.</p>
          ) : (
            <ul className="mod-queue">
              {d.queue.map((it) => (
                <li key={it.target.type + it.target.id} className="mod-item" data-testid="queue-item" data-target={it.target.id}>
                  <header>
                    <span className="badge">{TARGET_LABELS[it.target.type] ?? it.target.type}</span>
                    <strong>{it.target.type === "MEMBER" ? it.target.summary : "@" + it.target.username}</strong>
                    {it.count > 0 && <span className="meta">{" · " + it.count + (it.count === 1 ? " report" : " reports")}</span>}
                  </header>
                  {it.target.type !== "MEMBER" && <p className="mod-summary">{it.target.summary}</p>}
                  {it.target.hidden && <p className="mod-hidden">{HIDDEN_LABELS[it.target.hidden] ?? "Hidden"}</p>}
                  {it.authorBan && (
                    <p className="mod-hidden">{(it.authorBan.kind === "BAN" ? "Author banned" : "Author silenced") + (it.authorBan.reason ? ": " + it.authorBan.reason : "")}</p>
                  )}
                  {Object.keys(it.reasons).length > 0 && (
                    <p className="meta">
                      {Object.entries(it.reasons)
                        .map(([r, n]) => r.toLowerCase() + " ×" + n)
                        .join(", ")}
                    </p>
                  )}
                  {it.texts.length > 0 && (
                    <ul className="mod-texts">
                      {it.texts.map((t, i) => (
                        <li key={i}>{"“" + t + "”"}</li>
                      ))}
                    </ul>
                  )}
                  {it.target.link && (
                    <p>
                      <a href={appBase(app) + it.target.link}>Open</a>
                    </p>
                  )}
                  <ItemActions app={app.name} item={it} />
                </li>
              ))}
            </ul>
          )}
        </section>

        <section aria-labelledby="bans-title">
          <h2 id="bans-title">Bans and silences</h2>
          {d.bans.length === 0 ? (
            <p className="empty">Nobody is banned or silenced.</p>
          ) : (
            <ul className="mod-bans">
              {d.bans.map((b) => (
                <li key={b.id} data-testid="ban">
                  <strong>{"@" + b.username}</strong> {b.kind === "BAN" ? "banned" : "silenced"}
                  {" " + (b.endsAt ? "until " + formatDateTime(b.endsAt) : "for good")}
                  {b.reason && <span className="meta">{" · " + b.reason}</span>}
                  <form method="post" action={base} className="mod-action">
                    <input type="hidden" name="action" value="LIFT" />
                    <input type="hidden" name="targetType" value="MEMBER" />
                    <input type="hidden" name="targetId" value={b.userId} />
                    <button type="submit" className="button button-secondary">
                      Lift
                    </button>
                  </form>
                </li>
              ))}
            </ul>
          )}
        </section>

        <section aria-labelledby="rules-title">
          <h2 id="rules-title">Rules</h2>
          {d.canSetRules ? (
            <form method="post" action={base + "/settings"} className="mod-rules">
              <label className="field">
                <span>Hide content reported by this many members until reviewed</span>
                <input type="number" name="reportThreshold" min={1} max={1000} defaultValue={d.threshold} required />
              </label>
              <label className="checkbox">
                <input type="checkbox" name="holdNewAccountLinks" value="1" defaultChecked={d.settings.holdNewAccountLinks} /> Hold posts with
                links from accounts younger than a day (or without a verified e-mail) for approval
              </label>
              <button type="submit" className="button button-secondary">
                Save rules
              </button>
            </form>
          ) : (
            <p className="meta">
              {"Content reported by " + d.threshold + " members is hidden until reviewed." +
                (d.settings.holdNewAccountLinks ? " Posts with links from new accounts wait for approval." : "")}
            </p>
          )}
        </section>

        <section aria-labelledby="log-title">
          <h2 id="log-title">Audit log</h2>
          {d.log.length === 0 ? (
            <p className="empty">No moderation actions yet.</p>
          ) : (
            <table className="mod-log">
              <thead>
                <tr>
                  <th>When</th>
                  <th>Who</th>
                  <th>What</th>
                  <th>Target</th>
                  <th>Reason</th>
                </tr>
              </thead>
              <tbody>
                {d.log.map((e) => (
                  <tr key={e.id} data-testid="audit-entry">
                    <td>{formatDateTime(e.createdAt)}</td>
                    <td>{e.actorName ? "@" + e.actorName : "System"}</td>
                    <td>{e.action}</td>
                    <td>{(e.targetType ? (TARGET_LABELS[e.targetType] ?? e.targetType) + " " : "") + (e.targetName ? "@" + e.targetName : "")}</td>
                    <td>{e.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {d.logPagination.totalPages > 1 && (
            <nav className="pager">
              {d.logPagination.page > 1 && <a href={base + "?page=" + (d.logPagination.page - 1)}>Previous</a>}
              <span>{"page " + d.logPagination.page + " of " + d.logPagination.totalPages}</span>
              {d.logPagination.hasNext && <a href={base + "?page=" + (d.logPagination.page + 1)}>Next</a>}
            </nav>
          )}
        </section>
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  return (
    <>
      <title>{"Moderation · " + (props.app ? displayTitle(props.app) : "Marquee")}</title>
      <meta name="robots" content="noindex" />
    </>
  );
}
