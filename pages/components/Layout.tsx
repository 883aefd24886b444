import type { ReactNode } from "react";
import AppChrome from "../../islands/AppChrome";
import Footer from "../../islands/Footer";
import HeaderActions from "../../islands/HeaderActions";
import { Island } from "../lib/Island";
import { footerHidden, footerProps } from "../lib/footer";
import type { PageProps } from "../lib/types";
import { displayTitle, Header } from "./Header";
import { appBase } from "../lib/links";

// Layout is the frame of every app page: header, content, footer island.
export function Layout({ props, children, hideFooter }: { props: PageProps<any>; children: ReactNode; hideFooter?: boolean }) {
  const app = props.app;
  if (!app) return <main className="page">{children}</main>;
  // The subscription gate hides the footer too (SPEC.md section 2).
  const showFooter = !hideFooter && !footerHidden(props.path) && !props.viewer.gated;
  const p = props.viewer.permissions;
  const signedIn = props.viewer.user !== null;
  return (
    <div className={"app-shell" + (showFooter ? " with-footer" : "")}>
      <LaunchBar props={props} />
      <Header app={app}>
        {signedIn && (
          <Island
            name="HeaderActions"
            component={HeaderActions}
            when="idle"
            props={{
              appId: app.id,
              appName: app.name,
              path: props.path,
              signedIn,
              canDonate: p.canDonate,
              canNotifications: p.canNotifications,
              canSearch: p.canSearch,
              suggestedAmounts: app.suggestedDonationAmounts ?? [],
              tiers: app.donationTiers ?? [],
              publishableKey: props.stripeKey ?? "",
            }}
          />
        )}
      </Header>
      <main className="page">
        {props.viewer.loadError && (
          <p className="inline-error user-load-error" role="alert">
            {props.viewer.loadError + " "}
            <a href={props.path}>Retry</a>
          </p>
        )}
        {children}
      </main>
      {showFooter &&
        (signedIn ? (
          <Island name="Footer" component={Footer} props={footerProps(app, props)} when="idle" />
        ) : (
          // Visitors get the footer as plain HTML: its drawer is a <details>
          // and works unhydrated, so a visitor's page ships no JavaScript
          // unless its own content needs some.
          <Footer {...footerProps(app, props)} />
        ))}
      {/* The installable app (service worker, install banner, pull to
          refresh) is for members; a visitor's page stays free of JavaScript. */}
      {signedIn && <Island name="AppChrome" component={AppChrome} props={{ appName: app.name, title: displayTitle(app), onDomain: app.onDomain }} when="idle" />}
    </div>
  );
}

// LaunchBar is what staff see above an app that is not published yet, or
// while they preview it as a visitor or a member (issue 43 item 1): what
// it is, and a way back (plain forms and links: no JavaScript needed).
function LaunchBar({ props }: { props: PageProps<any> }) {
  const app = props.app!;
  const base = appBase(app);
  const preview = props.viewer.preview;
  if (preview) {
    const other = preview === "visitor" ? "member" : "visitor";
    return (
      <div className="launch-bar previewing" role="status">
        <span>
          <strong>{"Previewing as a " + preview}</strong>
          {preview === "visitor" ? ": this is what someone who is not signed in sees." : ": this is what a member of every tier sees."}
          {app.unpublished && " Your app is not published yet."}
        </span>
        <form method="post" action={base + "/studio/preview"} className="launch-bar-forms">
          <input type="hidden" name="back" value={props.path} />
          <button type="submit" name="mode" value={other} className="link-button">{"View as a " + other}</button>
          <button type="submit" name="mode" value="off" className="button">Exit preview</button>
        </form>
      </div>
    );
  }
  if (!app.unpublished) return null;
  return (
    <div className="launch-bar" role="status">
      <span>
        <strong>This app is not published yet</strong> — only its staff can see it.
      </span>
      {props.viewer.permissions.canManage && <a href={base + "/studio/launch"}>Launch checklist</a>}
    </div>
  );
}
