import { Layout } from "./components/Layout";
import { displayTitle } from "./components/Header";
import { appSeo, SeoHead } from "./lib/seo";
import { truncate } from "./lib/format";
import { carouselMedia, type EventDetail } from "./lib/events";
import type { PageProps } from "./lib/types";
import { Island } from "./lib/Island";
import BackButton from "../islands/BackButton";
import EventCarousel from "../islands/EventCarousel";
import EventDetails from "../islands/EventDetails";
import EventAttendees from "../islands/EventAttendees";
import { appBase, appBaseUrl } from "./lib/links";

// confirmLeave: the viewer asked to leave without JavaScript and the page
// asks first (server/event_attend.go).
type Props = PageProps<(EventDetail & { confirmLeave?: boolean }) | null>;

export default function Event(props: Props) {
  const app = props.app!;
  const events = appBase(app) + "/events";
  const event = props.data;
  if (!event) {
    return (
      <Layout props={props}>
        <div className="state state-error" role="alert">
          <h1>{props.error ?? "Failed to load event"}</h1>
          <Island name="BackButton" component={BackButton} props={{ fallback: events, label: "Go Back" }} />
        </div>
      </Layout>
    );
  }
  const signedIn = props.viewer.user !== null;
  const media = carouselMedia(event);
  return (
    <Layout props={props}>
      <div className="event-page">
        <Island name="BackButton" component={BackButton} props={{ fallback: events }} />
        {media.length > 0 && <Island name="EventCarousel" component={EventCarousel} props={{ media, name: event.name }} />}
        {/* The facts, actions and attendees: beside the media on a desktop. */}
        <div className="event-side">
        <Island
          name="EventDetails"
          component={EventDetails}
          props={{
            appName: app.name,
            event: {
              id: event.id,
              name: event.name,
              description: event.description,
              location: event.location,
              startDate: event.startDate,
              endDate: event.endDate,
              type: event.type,
              isFeatured: event.isFeatured,
              isAttending: event.isAttending,
              attendeeCount: event.attendeeCount,
              userRole: event.userRole,
              locked: event.locked,
              access: event.access,
              accessTier: event.accessTier,
            },
            permissions: event.permissions,
            ticket: event.ticket,
            signedIn,
            signInUrl: props.authUrl + "/authenticate/signin?app=" + encodeURIComponent(app.name),
            confirmLeave: !!event.confirmLeave,
          }}
        />
        <p className="report-links">
          <a className="report-link" href={appBase(app) + "/report?type=EVENT&id=" + event.id}>
            Report event
          </a>
        </p>
        {signedIn && (
          <Island
            name="EventAttendees"
            component={EventAttendees}
            props={{ eventId: event.id, attendees: event.attendees, total: event.attendeePagination.total, canManage: event.permissions.canManageAttendees }}
          />
        )}
        </div>
      </div>
    </Layout>
  );
}

// eventStatus and eventAttendanceMode for schema.org: a livestream is
// online, everything else is attended in person.
export function head(props: Props) {
  const app = props.app!;
  const event = props.data;
  if (!event) return <title>{props.error ?? "Event not found"}</title>;
  const seo = appSeo(app, props, "/events/" + event.id);
  seo.title = event.name + " · " + seo.title;
  seo.description = event.description ? truncate(event.description.replace(/\s+/g, " "), 160) : seo.description;
  const image = carouselMedia(event).find((m) => m.type === "IMAGE")?.signedUrl;
  if (image) seo.image = image;
  const online = event.type === "LIVESTREAM";
  seo.jsonLd = {
    "@context": "https://schema.org",
    "@type": "Event",
    name: event.name,
    description: event.description,
    url: seo.url,
    startDate: event.startDate,
    endDate: event.endDate,
    eventStatus: "https://schema.org/EventScheduled",
    eventAttendanceMode: online ? "https://schema.org/OnlineEventAttendanceMode" : "https://schema.org/OfflineEventAttendanceMode",
    location: online
      ? { "@type": "VirtualLocation", name: event.location || "Online", url: seo.url }
      : { "@type": "Place", name: event.location || app.name, address: event.location || app.name },
    organizer: { "@type": "Organization", name: displayTitle(app), url: appBaseUrl(app, props.publicUrl) },
    ...(image ? { image: [image] } : {}),
  };
  return <SeoHead seo={seo} />;
}

export function status(props: Props) {
  return props.status ?? 200;
}
