import { formatDateTime } from "../lib/format";
import type { PageProps, StudioData } from "../lib/types";
import { FieldError, cls } from "./fields";
import { appBase } from "../lib/links";

// DataSection is the studio's "Export & delete" screen (issue 43 item 3):
// the app's data as one archive (members, orders, donations, posts and
// events as CSV and JSON in a zip) mailed as a link, and the danger zone
// where the creator deletes the app by typing its name. Plain forms.
export function DataSection({ props }: { props: PageProps<StudioData> }) {
  const d = props.data;
  const a = d.appData!;
  const app = props.app!;
  const base = appBase(app) + "/studio/data";
  const blocked = a.pending.length > 0;
  return (
    <>
      <section className="studio-card" aria-labelledby="export-h">
        <h2 id="export-h">Export your app's data</h2>
        <p className="meta">
          One zip file with your members, orders (with their lines), donations, posts and events, each as a CSV
          spreadsheet and as JSON. It is prepared in the background; we mail a download link to {a.mailTo}, which
          works for 3 days, for you alone.
        </p>
        <form method="post" action={base + "/export"} className="studio-form">
          <button type="submit" className="button">Mail me an export</button>
        </form>
        {a.exports.length > 0 && (
          <ul className="export-list">
            {a.exports.map((e) => (
              <li key={e.id}>
                {"Asked for " + formatDateTime(e.createdAt) + ": "}
                {e.readyAt ? "ready, link mailed (expires " + formatDateTime(e.expiresAt) + ")" : "being prepared"}
              </li>
            ))}
          </ul>
        )}
      </section>
      <section className="studio-card danger-zone" aria-labelledby="delete-h">
        <h2 id="delete-h">Danger zone: delete this app</h2>
        <p>
          Deleting <strong>{app.name}</strong> removes it and everything in it for good: members, posts, events,
          store items and orders, and its images and files from storage. Its name becomes free again. Export its data
          first if you may need it.
        </p>
        {blocked && (
          <div className="form-error" role="alert" data-testid="money-pending">
            <p>This app cannot be deleted while money is pending:</p>
            <ul>
              {a.pending.map((p) => (
                <li key={p}>{p}</li>
              ))}
            </ul>
          </div>
        )}
        {d.form === "delete" && d.error && !blocked && <p className="form-error" role="alert">{d.error}</p>}
        <form method="post" action={base + "/delete"} className="studio-form">
          <label className={cls(d, "confirm")}>
            {"Type " + app.name + " to confirm"}
            <input name="confirm" autoComplete="off" spellCheck={false} autoCapitalize="none" defaultValue={a.confirm} required />
            <FieldError d={d} name="confirm" />
          </label>
          <button type="submit" className="button button-danger" disabled={blocked}>Delete this app</button>
        </form>
      </section>
    </>
  );
}
