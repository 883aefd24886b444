import type { ReactNode } from "react";
import { truncate } from "../pages/lib/format";
import { Img } from "../pages/lib/img";
import { STATUS_LABELS, timeStatus, typeLabel } from "../pages/lib/events";
import type { EventView } from "../pages/lib/types";
import { unlockOf } from "../pages/lib/community";

// EventCard is one card of the events list: media preview (first 3, then
// +N), time status, description cut at 100 (SPEC.md section 9). The page
// renders it with a LocalTime island for the time; the Load More island
// renders it with LocalTime directly. time renders the start.
export function EventCard({ event, base, now, time }: { event: EventView; base: string; now: string; time: (iso: string) => ReactNode }) {
  const preview = event.media.slice(0, 3);
  const more = event.media.length - preview.length;
  const status = timeStatus(event, now);
  return (
    <li className="card event-list-card">
      <a href={base + "/events/" + event.id}>
        {preview.length > 0 && (
          <div className="event-media-preview">
            {preview.map((m) =>
              m.type === "VIDEO" ? (
                <video key={m.id} src={m.signedUrl} muted playsInline preload="metadata" />
              ) : (
                <Img key={m.id} media={m} alt="" sizes="30vw" box={[120, 72]} />
              ),
            )}
            {more > 0 && <span className="media-more">+{more}</span>}
          </div>
        )}
        <div className="event-card-body">
          <p className="event-badges">
            <span className={"badge status-" + status}>{STATUS_LABELS[status]}</span>
            <span className="badge">{typeLabel(event.type)}</span>
            {event.isOfficial && <span className="badge">Official</span>}
            {event.isFeatured && <span className="badge">Featured</span>}
            {event.locked && (
              <span className="badge locked-badge" data-testid="locked-badge">
                <span aria-hidden="true">🔒 </span>
                {unlockOf(event, base).badge}
              </span>
            )}
          </p>
          <h2>{event.name}</h2>
          {event.description && <p className="event-desc">{truncate(event.description, 100)}</p>}
          <p className="meta">
            {time(event.startDate)}
            {event.location && <> · {event.location}</>}
          </p>
          <p className="meta">
            {event.attendeeCount} attending{event.isAttending && " · You're going"}
          </p>
        </div>
      </a>
    </li>
  );
}

