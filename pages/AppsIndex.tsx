import AppNameCheck from "../islands/AppNameCheck";
import { Island } from "./lib/Island";
import type { AppsIndexData, PageProps } from "./lib/types";

// AppsIndex is the creator-template placeholder at /apps and, for a
// signed-in user, the apps they run and "Create your app" (SELF_SERVE_APPS).
export default function AppsIndex(props: PageProps<AppsIndexData | null>) {
  const d = props.data;
  return (
    <main className="page placeholder apps-index">
      <h1>Marquee</h1>
      {d && d.deleted && (
        <p className="added-alert" role="status">{d.deleted + " was deleted with everything in it; its files are being removed."}</p>
      )}
      <p>This is the home of a creator app template.</p>
      <p>
        Open <code>/apps/{"{appName}"}</code> to visit an app, for example <a href="/apps/demo">/apps/demo</a>.
      </p>
      {d && d.apps.length > 0 && (
        <section className="your-apps" aria-labelledby="your-apps">
          <h2 id="your-apps">Your apps</h2>
          <ul className="card-list">
            {d.apps.map((a) => (
              <li key={a.name} className="card your-app">
                <a href={"/apps/" + a.name}><strong>{a.displayName || a.name}</strong></a>
                <span className="meta"> /apps/{a.name} · {a.role}{a.status !== "PUBLIC" ? " · " + a.status : ""}{a.published ? "" : " · Not published yet"}</span>
                {a.status !== "SUSPENDED" && (
                  <a className="button button-secondary" href={"/apps/" + a.name + (a.published ? "/studio" : "/studio/launch")}>
                    {a.published ? "Open studio" : "Launch checklist"}
                  </a>
                )}
              </li>
            ))}
          </ul>
        </section>
      )}
      {d && d.selfServe && (
        <section className="create-app" aria-labelledby="create-app">
          <h2 id="create-app">Create your app</h2>
          {d.signedIn ? (
            <form method="post" action="/apps" className="create-app-form" noValidate>
              {d.error && !d.fields.name && !d.fields.displayName && (
                <p className="form-error" role="alert">{d.error}</p>
              )}
              <Island name="AppNameCheck" component={AppNameCheck} props={{ value: d.name, error: d.fields.name ?? "" }} when="load" />
              <div className={"field" + (d.fields.displayName ? " has-error" : "")}>
                <label htmlFor="app-display-name">Display name</label>
                <input id="app-display-name" name="displayName" maxLength={60} defaultValue={d.displayName} placeholder="My Studio" />
                {d.fields.displayName && <p className="field-error">{d.fields.displayName}</p>}
              </div>
              <button type="submit" className="button">Create app</button>
            </form>
          ) : (
            <p>
              <a className="button" href={props.authUrl + "/authenticate/signup"}>Sign up</a>{" "}
              <a className="button button-secondary" href={props.authUrl + "/authenticate/signin"}>Sign in</a>
              <br />
              <span className="meta">to create an app of your own.</span>
            </p>
          )}
        </section>
      )}
    </main>
  );
}

export function head() {
  return (
    <>
      <title>Marquee</title>
      <meta name="description" content="White-label apps for creators. Open /apps/{appName} to visit an app." />
    </>
  );
}
