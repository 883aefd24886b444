import { displayTitle, TitleImage } from "./components/Header";
import type { PageProps } from "./lib/types";
import type { AuthFormData } from "./lib/generated";
import { appBaseUrl } from "./lib/links";

type Props = PageProps<AuthFormData>;

const titles: Record<AuthFormData["mode"], string> = {
  signin: "Sign In",
  signup: "Sign Up",
  forgot: "Forgot password",
  reset: "Choose a new password",
  message: "Account",
};

function Field({ name, label, type, value, error, autoComplete }: {
  name: string; label: string; type: string; value?: string; error?: string; autoComplete: string;
}) {
  // Ids are fixed strings (not useId): this page renders on the server only.
  const id = "field-" + name;
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

// AuthForm is the sign-in and sign-up page of the auth site, branded with the
// app when ?app= names one. It is a plain form with no JavaScript: the auth
// site serves no scripts, and the form works everywhere.
export default function AuthForm(props: Props) {
  const d = props.data;
  const app = props.app;
  const signup = d.mode === "signup";
  const q = d.appName ? "?app=" + encodeURIComponent(d.appName) : "";
  const other = signup ? "/authenticate/signin" + q : "/authenticate/signup" + q;
  const back = app ? appBaseUrl(app, props.publicUrl) : props.publicUrl + "/";
  const title = app ? displayTitle(app) : "Marquee";
  const brand = (
    <div className="auth-brand">
      {app?.title ? <TitleImage media={app.title} alt={title} height={40} priority /> : <span className="auth-brand-name">{title}</span>}
    </div>
  );
  const backLink = (
    <p className="auth-back">
      <a href={back}>{app ? "Back to " + title : "Back to Marquee"}</a>
    </p>
  );
  const formError = d.errors.form && (
    <p className="form-error" role="alert">
      {d.errors.form}
    </p>
  );
  if (d.mode === "message") {
    return (
      <main className="auth-page">
        <div className="auth-card">
          {brand}
          <h1>{d.title}</h1>
          <p className="auth-message">{d.message}</p>
          {(d.links ?? []).map((l) =>
            l.post ? (
              <form key={l.href} method="post" action={l.href} className="auth-switch">
                <button type="submit" className="button">
                  {l.label}
                </button>
              </form>
            ) : (
              <p key={l.href} className="auth-switch">
                <a className="button" href={l.href}>
                  {l.label}
                </a>
              </p>
            ),
          )}
          {backLink}
        </div>
      </main>
    );
  }
  if (d.mode === "forgot" || d.mode === "reset") {
    const forgot = d.mode === "forgot";
    return (
      <main className="auth-page">
        <div className="auth-card">
          {brand}
          <h1>{forgot ? "Forgot your password?" : "Choose a new password"}</h1>
          <p className="meta">
            {forgot
              ? "Enter the email address of your account. We will send you a link to choose a new password."
              : "Setting a new password signs you out on every other device."}
          </p>
          {formError}
          <form method="post" action={d.action} noValidate>
            {forgot ? (
              <Field name="email" label="Email" type="email" value={d.values.email} error={d.errors.email} autoComplete="email" />
            ) : (
              <>
                <input type="hidden" name="token" value={d.token ?? ""} />
                <Field name="password" label="New password (8 to 128 characters)" type="password" error={d.errors.password} autoComplete="new-password" />
              </>
            )}
            <button type="submit" className="button auth-submit">
              {forgot ? "Send reset link" : "Set new password"}
            </button>
          </form>
          <p className="auth-switch">
            <a href={"/authenticate/signin" + q}>Back to Sign In</a>
          </p>
          {backLink}
        </div>
      </main>
    );
  }
  return (
    <main className="auth-page">
      <div className="auth-card">
        {brand}
        <h1>{signup ? "Create your account" : "Sign in"}</h1>
        {d.signedIn && <p className="meta">You are signed in as @{d.signedIn}. Signing in again starts a new session.</p>}
        {formError}
        <form method="post" action={d.action} noValidate>
          {signup ? (
            <>
              <Field name="email" label="Email" type="email" value={d.values.email} error={d.errors.email} autoComplete="email" />
              <Field name="username" label="Username" type="text" value={d.values.username} error={d.errors.username} autoComplete="username" />
              <Field name="password" label="Password (8 to 128 characters)" type="password" error={d.errors.password} autoComplete="new-password" />
            </>
          ) : (
            <>
              <Field name="email" label="Email or username" type="text" value={d.values.email} error={d.errors.email} autoComplete="username" />
              <Field name="password" label="Password" type="password" error={d.errors.password} autoComplete="current-password" />
              <p className="auth-forgot">
                <a href={"/authenticate/forgot" + q}>Forgot password?</a>
              </p>
            </>
          )}
          <button type="submit" className="button auth-submit">
            {signup ? "Sign Up" : "Sign In"}
          </button>
        </form>
        <p className="auth-switch">
          {signup ? "Already have an account? " : "New here? "}
          <a href={other}>{signup ? "Sign In" : "Sign Up"}</a>
        </p>
        {backLink}
      </div>
    </main>
  );
}

export function head(props: Props) {
  const name = props.app ? displayTitle(props.app) : "Marquee";
  return (
    <>
      <title>{(props.data.mode === "message" ? props.data.title || titles.message : titles[props.data.mode]) + " · " + name}</title>
      <meta name="description" content={"Your " + name + " account: sign in, sign up or reset your password."} />
      <meta name="robots" content="noindex" />
    </>
  );
}

export function status(props: Props) {
  return props.status ?? 200;
}
