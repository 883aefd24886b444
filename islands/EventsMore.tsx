import { useState } from "react";
import type { EventView } from "../pages/lib/types";
import { EventCard } from "./EventCard";
import LocalTime from "./LocalTime";
import { request, type Query } from "./lib/api";
import { useHydrated } from "./lib/hydrated";

export interface EventsMoreProps {
  appId: string;
  base: string;
  now: string;
  query: string; // the list's filters, as a query string without page
  next: number;
  nextHref: string; // the next page, for the link before hydration
}

// EventsMore is Load More Events: it appends the next pages of the same
// filtered list below the server-rendered cards. Before hydration (or
// without JavaScript) it is a link to the next page.
export default function EventsMore(props: EventsMoreProps) {
  const [events, setEvents] = useState<EventView[]>([]);
  const [next, setNext] = useState<number | null>(props.next);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const hydrated = useHydrated();

  async function more(e: React.MouseEvent) {
    e.preventDefault();
    if (busy || next === null) return;
    setBusy(true);
    setError("");
    try {
      // props.query is the list's own filters, as the page's URL has them.
      const query = { ...Object.fromEntries(new URLSearchParams(props.query)), page: next } as Query<"GET", "/api/events/apps/{appId}/events">;
      const { data, pagination } = await request("GET", "/api/events/apps/{appId}/events", { params: { appId: props.appId }, query });
      setEvents((xs) => [...xs, ...data]);
      setNext(pagination?.hasNext ? pagination.page + 1 : null);
    } catch {
      setError("Failed to load events");
    }
    setBusy(false);
  }

  return (
    <>
      {events.length > 0 && (
        <ul className="card-list event-list event-list-more">
          {events.map((ev) => (
            <EventCard key={ev.id} event={ev} base={props.base} now={props.now} time={(iso) => <LocalTime iso={iso} />} />
          ))}
        </ul>
      )}
      {error && (
        <p className="inline-error" role="alert">
          {error}{" "}
          <button type="button" className="button button-secondary" onClick={more}>
            Try again
          </button>
        </p>
      )}
      {next !== null && (
        <a className="button button-secondary load-more" href={props.nextHref} onClick={more} aria-disabled={busy || undefined} data-hydrated={hydrated ? "true" : undefined}>
          {busy ? "Loading..." : "Load More Events"}
        </a>
      )}
    </>
  );
}
