import { Layout } from "./components/Layout";
import { displayTitle } from "./components/Header";
import type { PageProps, ReportPageData } from "./lib/types";
import { appBase } from "./lib/links";

type Props = PageProps<ReportPageData>;

const REASON_LABELS: Record<string, string> = {
  SPAM: "Spam",
  HARASSMENT: "Harassment",
  ILLEGAL: "Illegal content",
  OTHER: "Something else",
};

const TARGET_LABELS: Record<string, string> = {
  POST: "post",
  COMMENT: "comment",
  STORY: "story",
  EVENT: "event",
  MEMBER: "member",
};

// Report: the form every Report link leads to. A plain form post, so it
// works without JavaScript; after it the page says the report was received.
export default function Report(props: Props) {
  const app = props.app!;
  const d = props.data;
  const t = d.target!;
  const what = TARGET_LABELS[t.type] ?? "content";
  const back = t.link ? appBase(app) + t.link : appBase(app) + "/community";
  return (
    <Layout props={props}>
      <div className="report-page">
        <h1>{"Report " + what}</h1>
        <blockquote className="report-target" data-testid="report-target">
          <span className="meta">{t.type === "MEMBER" ? "Member" : "By @" + t.username}</span>
          <p>{t.summary}</p>
        </blockquote>
        {d.done ? (
          <div className="notice" role="status" data-testid="report-received">
            <strong>Report received.</strong> Thank you: our moderators will review it.
          </div>
        ) : (
          <form method="post" action={appBase(app) + "/report"} className="report-form">
            <input type="hidden" name="targetType" value={t.type} />
            <input type="hidden" name="targetId" value={t.id} />
            {d.error && (
              <p className="field-error" role="alert">
                {d.error}
              </p>
            )}
            <fieldset>
              <legend>What is wrong?</legend>
              {d.reasons.map((r, i) => (
                <label key={r} className="radio">
                  <input type="radio" name="reason" value={r} required defaultChecked={i === 0} /> {REASON_LABELS[r] ?? r}
                </label>
              ))}
            </fieldset>
            <label className="field">
              <span>Tell the moderators more (needed for "Something else")</span>
              <textarea name="text" rows={3} maxLength={1000} />
            </label>
            <button type="submit" className="button">
              Send report
            </button>
          </form>
        )}
        <p>
          <a href={back}>{t.link ? "Back" : "Back to " + displayTitle(app)}</a>
        </p>
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  return (
    <>
      <title>{"Report · " + (props.app ? displayTitle(props.app) : "Marquee")}</title>
      <meta name="robots" content="noindex" />
    </>
  );
}
