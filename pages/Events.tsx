import { Layout } from "./components/Layout";
import { listSeo, SeoHead } from "./lib/seo";
import { typeLabel } from "./lib/events";
import type { EventView, PageProps } from "./lib/types";
import type { Pagination } from "./lib/community";
import { Island } from "./lib/Island";
import LocalTime from "../islands/LocalTime";
import { EventCard } from "../islands/EventCard";
import EventsMore from "../islands/EventsMore";
import { appBase } from "./lib/links";

type Filters = { search: string; type: string; isOfficial: boolean; isFeatured: boolean };
type Data = { events: EventView[]; pagination: Pagination; filters: Filters; filtered: boolean; types: string[] };
type Props = PageProps<Data>;

// pageHref keeps the filters while paging. (goja has no URLSearchParams.)
export function pageHref(base: string, f: Filters, page: number, limit: number): string {
  const q: string[] = [];
  const add = (k: string, v: string) => q.push(k + "=" + encodeURIComponent(v));
  if (f.search) add("search", f.search);
  if (f.type) add("type", f.type);
  if (f.isOfficial) add("isOfficial", "true");
  if (f.isFeatured) add("isFeatured", "true");
  if (limit !== 20) add("limit", String(limit));
  if (page > 1) add("page", String(page));
  return base + "/events" + (q.length ? "?" + q.join("&") : "");
}

export default function Events(props: Props) {
  const app = props.app!;
  const base = appBase(app);
  const { events, pagination, filters, filtered, types } = props.data;
  const canCreate = props.viewer.permissions.canCreateEvents;
  return (
    <Layout props={props}>
      <div className="events-page">
        <div className="section-head">
          <h1>Events</h1>
          {canCreate && (
            <a className="button" href={base + "/create-event"}>
              New Event
            </a>
          )}
        </div>
        <div className="events-layout">
          {/* A plain GET form: filtering works without JavaScript and every
              filtered list has its own URL. On a phone it folds behind a
              Filters button (details/summary, no JavaScript); it stays open
              while a filter is on, and a desktop always shows it. */}
          <details className="filters-fold" open={filtered || undefined}>
          <summary className="button button-secondary filters-toggle">Filters</summary>
          <form className="event-filters" method="get" action={base + "/events"} aria-label="Filter events">
            <label>
              Search
              <input type="search" name="search" defaultValue={filters.search} />
            </label>
            <label>
              Event type
              <select name="type" defaultValue={filters.type}>
                <option value="">All types</option>
                {types.map((t) => (
                  <option key={t} value={t}>
                    {typeLabel(t)}
                  </option>
                ))}
              </select>
            </label>
            <label className="check">
              <input type="checkbox" name="isOfficial" value="true" defaultChecked={filters.isOfficial} /> Official only
            </label>
            <label className="check">
              <input type="checkbox" name="isFeatured" value="true" defaultChecked={filters.isFeatured} /> Featured only
            </label>
            <div className="filter-actions">
              <button className="button" type="submit">
                Apply
              </button>
              <a className="button button-secondary" href={base + "/events"}>
                Reset
              </a>
            </div>
          </form>
          </details>
          <div className="events-results">
            {props.error ? (
              <div className="state state-error" role="alert">
                <p>{props.error}</p>
                <a className="button" href={props.path}>
                  Try again
                </a>
              </div>
            ) : events.length === 0 ? (
              <div className="state">
                <p className="empty">No events found</p>
                {!filtered && canCreate && (
                  <a className="button" href={base + "/create-event"}>
                    Create First Event
                  </a>
                )}
              </div>
            ) : (
              <>
                <ul className="card-list event-list">
                  {events.map((e) => (
                    <EventCard
                      key={e.id}
                      event={e}
                      base={base}
                      now={props.now}
                      time={(iso) => <Island name="LocalTime" component={LocalTime} props={{ iso }} when="idle" />}
                    />
                  ))}
                </ul>
                {pagination.hasNext &&
                  (props.viewer.user ? (
                    <Island
                      name="EventsMore"
                      component={EventsMore}
                      props={{ appId: app.id, base, now: props.now, query: pageHref("", filters, 1, pagination.limit).replace(/^\/events\??/, ""), next: pagination.page + 1, nextHref: pageHref(base, filters, pagination.page + 1, pagination.limit) }}
                    />
                  ) : (
                    <a className="button button-secondary load-more" href={pageHref(base, filters, pagination.page + 1, pagination.limit)}>
                      Load More Events
                    </a>
                  ))}
                {pagination.totalPages > 1 && (
                  <nav className="pager" aria-label="Pages">
                    {pagination.hasPrev ? (
                      <a className="button button-secondary" href={pageHref(base, filters, pagination.page - 1, pagination.limit)} rel="prev">
                        Previous
                      </a>
                    ) : (
                      <span className="button button-secondary" aria-disabled="true">
                        Previous
                      </span>
                    )}
                    <span>{"Page " + pagination.page + " of " + pagination.totalPages}</span>
                    {pagination.hasNext ? (
                      <a className="button button-secondary" href={pageHref(base, filters, pagination.page + 1, pagination.limit)} rel="next">
                        Next
                      </a>
                    ) : (
                      <span className="button button-secondary" aria-disabled="true">
                        Next
                      </span>
                    )}
                  </nav>
                )}
              </>
            )}
          </div>
        </div>
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  const app = props.app!;
  const seo = listSeo(app, props, "/events", "Events", props.data?.pagination?.page);
  return <SeoHead seo={seo} />;
}
