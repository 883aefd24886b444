import { AuthButtons } from "./components/AuthButtons";
import { Layout } from "./components/Layout";
import { formatDate, formatMoney, formatTime12, truncate } from "./lib/format";
import { Ago } from "./lib/Ago";
import { Img } from "./lib/img";
import { appSeo, SeoHead } from "./lib/seo";
import { displayTitle } from "./components/Header";
import { Plans } from "./components/Plans";
import type { AppView, EventView, ItemView, LinkItem, MessageView, PageProps, PlanItem } from "./lib/types";
import { Island } from "./lib/Island";
import LandingRetry from "../islands/LandingRetry";
import { appBase, appBaseUrl } from "./lib/links";

type Props = PageProps<{ appName?: string; gated?: boolean; plans?: PlanItem[]; plansError?: string; description?: string; previews?: boolean }>;

const EMPTY = "it's quiet here...";

function visibleLinks(app: AppView): LinkItem[] {
  const f = app.settings.features.links;
  if (!app.settings.landingPage.showLinkInBio || !f.enabled) return [];
  return (f.settings.links ?? []).filter((l) => l.enabled !== false && l.url.trim() !== "");
}

function domainOf(url: string): string {
  const m = /^[a-z]+:\/\/([^/?#:]+)/i.exec(url);
  return m ? m[1] : "";
}

// faviconUrl: the server fetches each link's icon once and serves it from
// our origin (server/link_icon.go); no third-party service sees the visit.
function faviconUrl(appName: string, url: string): string {
  return "/apps/" + appName + "/link-icons/" + encodeURIComponent(domainOf(url).toLowerCase());
}

function Section({ title, viewAll, children }: { title: string; viewAll: string | null; children: React.ReactNode }) {
  return (
    <section className="landing-section" aria-label={title}>
      <div className="section-head">
        <h2>{title}</h2>
        {viewAll && (
          <a className="view-all" href={viewAll}>
            View all
          </a>
        )}
      </div>
      {children}
    </section>
  );
}

function PostCard({ post, base, now }: { post: MessageView; base: string; now: string }) {
  const image = post.attachments.find((a) => a.media.type === "IMAGE")?.media;
  return (
    <li className="card post-card">
      <a href={base + "/posts/" + post.id}>
        {image && <Img media={image} alt="" sizes="72px" box={[72, 72]} />}
        <div>
          <p className="post-text">{truncate(post.content, 120)}</p>
          <p className="meta">
            @{post.sender.username} · <Ago iso={post.createdAt} now={now} />
            {post._count.reactions > 0 && <> · ❤️ {post._count.reactions}</>}
          </p>
        </div>
      </a>
    </li>
  );
}

function EventCard({ event, base }: { event: EventView; base: string }) {
  const image = event.media[0];
  return (
    <li className="card event-card">
      <a href={base + "/events/" + event.id}>
        {image && <Img media={image} alt="" sizes="96px" box={[96, 64]} />}
        <div>
          <h3>{event.name}</h3>
          <p className="meta">
            <time dateTime={event.startDate}>
              {/* Server and browser must print the same text, and goja has no
                  time zones: times are UTC and say so. */}
              {formatDate(event.startDate) + " · " + formatTime12(event.startDate) + " UTC"}
            </time>
            {event.location && <> · {event.location}</>}
          </p>
        </div>
      </a>
    </li>
  );
}

function ItemCard({ item, base }: { item: ItemView; base: string }) {
  const image = item.media[0];
  return (
    <li className="card item-card">
      <a href={base + "/store/items/" + item.id}>
        {image && <Img media={image} alt="" sizes="(max-width: 720px) 50vw, 230px" box={[230, 230]} />}
        <h3>{item.name}</h3>
        <p className="price">
          {formatMoney(item.price, item.currency)}
          {item.comparePrice != null && item.comparePrice > item.price && (
            <s className="compare">{formatMoney(item.comparePrice, item.currency)}</s>
          )}
        </p>
      </a>
    </li>
  );
}

export default function Landing(props: Props) {
  const app = props.app;
  if (!app)
    return (
      <main className="page">
        <Island
          name="LandingRetry"
          component={LandingRetry}
          props={{ appName: (props.data as { appName?: string } | null)?.appName ?? "", message: props.error ?? "Failed to load landing page", retryHref: props.path }}
        />
      </main>
    );
  const base = appBase(app);
  const signedIn = props.viewer.user !== null;
  const f = app.settings.features;
  const links = visibleLinks(app);
  // The gate sends everyone without a subscription here, so 'View all'
  // would only bounce back: it shows to those the gate lets in.
  const gated = !!props.data?.gated;
  const viewAll = (path: string) => (signedIn && !gated ? base + path : null);
  const previews = props.data?.previews !== false;

  return (
    <Layout props={props}>
      {app.banner && (
        <Img className="banner" media={app.banner} alt={displayTitle(app) + " banner"} sizes="(max-width: 1200px) 100vw, 1200px" fallback={[1200, 400]} priority />
      )}
      <div className="landing">
        {/* On a desktop the creator's side (name, bio, links, the gate)
            is a column beside the content; on a phone one above it. */}
        <div className="landing-side side-column">
          <h1 className="landing-title">{displayTitle(app)}</h1>
          {app.bio && <div className="bio" dangerouslySetInnerHTML={{ __html: app.bio }} />}

          {!signedIn && <AuthButtons authUrl={props.authUrl} appName={app.name} />}

          <p className="membership-link">
            <a href={base + "/membership"}>Membership tiers</a>
          </p>

          {links.length > 0 && (
            <section className={"links links-" + (f.links.settings.layout || "grid")} aria-label="Links">
              <h2 className="visually-hidden">Links</h2>
              <ul>
                {links.map((l) => (
                  <li key={l.id}>
                    <a href={l.url} rel="noopener noreferrer" target="_blank">
                      {/* A background image, so a missing icon leaves a plain tile
                          instead of a broken-image icon. */}
                      <span className="favicon" aria-hidden="true" style={{ backgroundImage: `url("${faviconUrl(app.name, l.url)}")` }} />
                      <span>{l.title}</span>
                    </a>
                  </li>
                ))}
              </ul>
            </section>
          )}

          {gated && (
            <section className="landing-section gate" aria-label="Subscription required">
              <h2>Members only</h2>
              <p>{props.data.description || "Subscribe to see everything " + displayTitle(app) + " shares with members."}</p>
              <Plans plans={props.data.plans ?? []} appName={app.name} signedIn={signedIn} authUrl={props.authUrl} error={props.data.plansError} />
              {signedIn && (
                // The profile is behind the gate too: its exits are here.
                <div className="gate-exits">
                  {props.viewer.permissions.canFollow && (
                    // Following is free: the creator can then find the fan
                    // (and give them a tier), and public posts reach them.
                    <form method="post" action={base + "/follow"}>
                      <input type="hidden" name="back" value="landing" />
                      <button type="submit" className="button button-secondary">Follow for free</button>
                    </form>
                  )}
                  {props.viewer.permissions.canUnfollow && (
                    <form method="post" action={base + "/unfollow"}>
                      <button type="submit" className="button button-secondary">Unfollow</button>
                    </form>
                  )}
                  <form method="post" action={base + "/signout"}>
                    <button type="submit" className="button button-secondary">Sign Out</button>
                  </form>
                </div>
              )}
            </section>
          )}

        </div>
        <div className="landing-main content-column">
          {previews && f.community.enabled && (
            <Section title="Posts" viewAll={viewAll("/community")}>
              {app.recentPosts.length === 0 ? (
                <p className="empty">{EMPTY}</p>
              ) : (
                <ul className="card-list">
                  {app.recentPosts.map((p) => (
                    <PostCard key={p.id} post={p} base={base} now={props.now} />
                  ))}
                </ul>
              )}
            </Section>
          )}

          {previews && f.events.enabled && (
            <Section title="Upcoming Events" viewAll={viewAll("/events")}>
              {app.upcomingEvents.length === 0 ? (
                <p className="empty">{EMPTY}</p>
              ) : (
                <ul className="card-list">
                  {app.upcomingEvents.map((e) => (
                    <EventCard key={e.id} event={e} base={base} />
                  ))}
                </ul>
              )}
            </Section>
          )}

          {previews && f.store.enabled && (
            <Section title="Featured Items" viewAll={viewAll("/store")}>
              {app.featuredStoreItems.length === 0 ? (
                <p className="empty">{EMPTY}</p>
              ) : (
                <ul className="item-grid">
                  {app.featuredStoreItems.map((i) => (
                    <ItemCard key={i.id} item={i} base={base} />
                  ))}
                </ul>
              )}
            </Section>
          )}
        </div>
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  const app = props.app;
  if (!app) return <title>Failed to load landing page</title>;
  const seo = appSeo(app, props);
  // The Atom feed of posts, as the community page announces it (the
  // server answers it when visitors may read the community).
  const g = app.settings.features.subscriptionGating;
  if (app.settings.features.community.enabled && !(g.enabled && (g.settings.required || g.settings.landingPageOnly))) {
    seo.feed = appBaseUrl(app, props.publicUrl) + "/feed.xml";
  }
  const sameAs = visibleLinks(app).map((l) => l.url);
  seo.jsonLd = {
    "@context": "https://schema.org",
    "@type": "ProfilePage",
    url: seo.url,
    mainEntity: {
      "@type": "Person",
      name: seo.title,
      description: seo.description,
      url: seo.url,
      ...(seo.image ? { image: seo.image } : {}),
      ...(sameAs.length ? { sameAs } : {}),
    },
  };
  return <SeoHead seo={seo} />;
}
