import { displayTitle, TitleImage } from "./components/Header";
import type { PageProps } from "./lib/types";
import type { AccountData } from "./lib/generated";

type Props = PageProps<AccountData>;

function Field({ name, label, type, value, error, autoComplete, idSuffix }: {
  name: string; label: string; type: string; value?: string; error?: string; autoComplete: string; idSuffix?: string;
}) {
  const id = "account-" + name + (idSuffix ? "-" + idSuffix : "");
  return (
    <div className={"field" + (error ? " has-error" : "")}>
      <label htmlFor={id}>{label}</label>
      <input id={id} name={name} type={type} defaultValue={value} autoComplete={autoComplete} required
        aria-invalid={error ? true : undefined} aria-describedby={error ? id + "-error" : undefined} />
      {error && (
        <p className="field-error" id={id + "-error"}>
          {error}
        </p>
      )}
    </div>
  );
}

// Dates are formatted on the server side of the page only (no JS here),
// in UTC so every render of the same data reads the same.
function when(iso: string | null | undefined): string {
  if (!iso) return "";
  const d = new Date(iso);
  const pad = (n: number) => (n < 10 ? "0" + n : "" + n);
  return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) + " " + pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + " UTC";
}

// Account is the member's settings on the auth site: e-mail (changed once
// the new address is confirmed), username, password, and the signed-in
// sessions with "sign out everywhere". Plain forms, no JavaScript.
export default function Account(props: Props) {
  const d = props.data;
  const app = props.app;
  const title = app ? displayTitle(app) : "Marquee";
  const q = d.query;
  const others = d.sessions.filter((s) => !s.current).length;
  return (
    <main className="auth-page">
      <div className="auth-card account-card">
        <div className="auth-brand">
          {app?.title ? <TitleImage media={app.title} alt={title} height={40} /> : <span className="auth-brand-name">{title}</span>}
        </div>
        <h1>Account settings</h1>
        {d.notice && (
          <p className="form-notice" role="status">
            {d.notice}
          </p>
        )}
        {d.errors.form && (
          <p className="form-error" role="alert">
            {d.errors.form}
          </p>
        )}

        <section className="account-section" aria-labelledby="account-email-h">
          <h2 id="account-email-h">Email</h2>
          <p className="meta">
            {d.email + " · "}
            <span className={d.emailVerified ? "badge-ok" : "badge-warn"}>{d.emailVerified ? "Confirmed" : "Not confirmed"}</span>
          </p>
          {!d.emailVerified && (
            <form method="post" action={"/authenticate/verify/resend" + q}>
              <button type="submit" className="button button-secondary">
                Send the confirmation link again
              </button>
            </form>
          )}
          <form method="post" action={"/authenticate/account/email" + q} noValidate>
            <Field name="email" label="New email" type="email" error={d.errors.email} autoComplete="email" />
            <Field name="emailPassword" label="Current password" type="password" error={d.errors.emailPassword} autoComplete="current-password" />
            <button type="submit" className="button">
              Change email
            </button>
          </form>
        </section>

        <section className="account-section" aria-labelledby="account-username-h">
          <h2 id="account-username-h">Username</h2>
          <form method="post" action={"/authenticate/account/username" + q} noValidate>
            <Field name="username" label="Username" type="text" value={d.username} error={d.errors.username} autoComplete="username" />
            <button type="submit" className="button">
              Change username
            </button>
          </form>
        </section>

        <section className="account-section" aria-labelledby="account-password-h">
          <h2 id="account-password-h">Password</h2>
          <form method="post" action={"/authenticate/account/password" + q} noValidate>
            <Field name="currentPassword" label="Current password" type="password" error={d.errors.currentPassword} autoComplete="current-password" />
            <Field name="newPassword" label="New password (8 to 128 characters)" type="password" error={d.errors.newPassword} autoComplete="new-password" />
            <button type="submit" className="button">
              Change password
            </button>
          </form>
        </section>

        <section className="account-section" aria-labelledby="account-sessions-h">
          <h2 id="account-sessions-h">Where you are signed in</h2>
          <ul className="session-list">
            {d.sessions.map((s) => (
              <li key={s.id} className="session-row">
                <strong>{s.device}</strong>
                {s.current && <span className="badge-ok">This device</span>}
                <span className="meta">{"Last used " + when(s.lastUsedAt) + " · signed in " + when(s.createdAt)}</span>
              </li>
            ))}
          </ul>
          {others > 0 && (
            <form method="post" action={"/authenticate/account/signout-others" + q}>
              <button type="submit" className="button button-secondary">
                {"Sign out everywhere else (" + others + ")"}
              </button>
            </form>
          )}
        </section>

        <section className="account-section" aria-labelledby="account-data-h">
          <h2 id="account-data-h">Your data</h2>
          <p className="meta">Download everything you put in or bought: profile, posts, comments, reactions, orders, donations, memberships and events. We e-mail you a link when it is ready.</p>
          <form method="post" action={"/authenticate/account/export" + q}>
            <button type="submit" className="button button-secondary">
              Download my data
            </button>
          </form>
        </section>

        <section className="account-section danger-zone" aria-labelledby="account-delete-h">
          <h2 id="account-delete-h">Delete account</h2>
          <p className="meta">Your profile, posts, comments, memberships and sessions are removed. Orders and payments stay in the creators' books without your name. A creator must hand over or delete their app first.</p>
          {d.errors.delete && (
            <p className="form-error" role="alert">
              {d.errors.delete}
            </p>
          )}
          <form method="post" action={"/authenticate/account/delete" + q} noValidate>
            <Field name="currentPassword" label="Your password" type="password" error={d.errors.deletePassword} autoComplete="current-password" idSuffix="delete" />
            <button type="submit" className="button danger">
              Delete my account
            </button>
          </form>
        </section>

        <p className="auth-back">
          <a href={d.backUrl}>{app ? "Back to " + title : "Back to Marquee"}</a>
        </p>
      </div>
    </main>
  );
}

export function head(props: Props) {
  const name = props.app ? displayTitle(props.app) : "Marquee";
  return (
    <>
      <title>{"Account settings · " + name}</title>
      <meta name="robots" content="noindex" />
    </>
  );
}

export function status(props: Props) {
  return props.status ?? 200;
}
