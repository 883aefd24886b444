import { Layout } from "./components/Layout";
import { appSeo, SeoHead } from "./lib/seo";
import type { PageProps } from "./lib/types";
import { Island } from "./lib/Island";
import CreateEventForm from "../islands/CreateEventForm";
import { appBase } from "./lib/links";

type Props = PageProps<{ types: string[]; values: Record<string, string>; error: string; fields?: Record<string, string>; accessOptions?: { value: string; label: string }[] }>;

// The create-event screen: back and close lead to the events list; the
// footer is hidden on this path.
export default function CreateEvent(props: Props) {
  const app = props.app!;
  const events = appBase(app) + "/events";
  const perms = props.viewer.permissions;
  return (
    <Layout props={props}>
      <div className="create-page">
        <div className="create-head">
          <a className="back-button" href={events} aria-label="Back to events">
            ← Back
          </a>
          <h1>New Event</h1>
          <a className="back-button" href={events} aria-label="Close">
            ✕
          </a>
        </div>
        {props.viewer.user === null ? (
          <p className="state">
            <a className="button" href={props.authUrl + "/authenticate/signin?app=" + encodeURIComponent(app.name)}>
              Sign In
            </a>
          </p>
        ) : (
          <Island
            name="CreateEventForm"
            component={CreateEventForm}
            props={{
              appId: app.id,
              appName: app.name,
              allowed: perms.canCreateEvents,
              canFeature: perms.canFeature,
              now: props.now,
              values: props.data.values,
              error: props.data.error,
              fields: props.data.fields ?? undefined,
              accessOptions: props.data.accessOptions ?? undefined,
            }}
          />
        )}
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  const seo = appSeo(props.app!, props, "/create-event");
  seo.title = "New Event · " + seo.title;
  seo.noindex = true;
  return <SeoHead seo={seo} />;
}
