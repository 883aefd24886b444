import { useState } from "react";
import LocalTime from "./LocalTime";
import { useHydrated } from "./lib/hydrated";
import { calendarHref, EVENT_TYPES, typeLabel, type EventDetail, type EventPermissions, type EventTicket } from "../pages/lib/events";
import { api, type Body } from "./lib/api";
import { unlockOf } from "../pages/lib/community";
import { appPath } from "./lib/links";

export interface EventDetailsProps {
  appName: string;
  event: Pick<EventDetail, "id" | "name" | "description" | "location" | "startDate" | "endDate" | "type" | "isFeatured" | "isAttending" | "attendeeCount" | "userRole" | "locked" | "access" | "accessTier">;
  permissions: EventPermissions;
  // ticket: the event is joined by buying this store item, not for free.
  ticket?: EventTicket | null;
  signedIn: boolean;
  signInUrl: string;
  // confirmLeave: the page was asked to confirm leaving (?confirm=leave,
  // where the Leave form lands without JavaScript).
  confirmLeave?: boolean;
}

// toLocalInput turns an ISO time into a datetime-local value in the
// browser's zone (edit mode only exists after hydration).
function toLocalInput(iso: string): string {
  const d = new Date(iso);
  const p = (n: number) => String(n).padStart(2, "0");
  return d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate()) + "T" + p(d.getHours()) + ":" + p(d.getMinutes());
}

export const ATTENDEES_CHANGED = "marquee:attendees-changed";

// EventDetails shows the event's facts and what the viewer may do: Add to
// Calendar, Join or Leave (optimistic, rolled back on failure; a plain form
// post without JavaScript), and for the host, creator or admin, inline Edit
// and Delete.
export default function EventDetails(props: EventDetailsProps) {
  const hydrated = useHydrated();
  const [event, setEvent] = useState(props.event);
  const [perms, setPerms] = useState(props.permissions);
  const [editing, setEditing] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  // Leaving asks first: a ticket holder's attendance belongs to the ticket.
  const [confirming, setConfirming] = useState(!!props.confirmLeave && props.permissions.canLeave);
  const [form, setForm] = useState({ name: "", description: "", location: "", type: "", start: "", end: "", isFeatured: false });
  const eventsHref = appPath(props.appName) + "/events";
  const attend = !event.isAttending;
  const held = !!props.ticket?.held;
  const attendAction = appPath(props.appName) + "/events/" + event.id + "/attend";

  async function toggleAttendance(e: React.FormEvent) {
    e.preventDefault();
    if (busy) return;
    if (!attend && !confirming) {
      setConfirming(true);
      return;
    }
    setConfirming(false);
    const before = { event, perms };
    setBusy(true);
    setError("");
    // Optimistic: status and count change at once (SPEC.md section 4).
    setEvent({ ...event, isAttending: attend, attendeeCount: event.attendeeCount + (attend ? 1 : -1), userRole: attend ? "ATTENDEE" : null });
    setPerms({ ...perms, canJoin: !attend, canLeave: attend });
    try {
      const params = { id: event.id };
      const data = attend
        ? await api("POST", "/api/events/{id}/join", { params, fallback: "Failed to join event" })
        : await api("DELETE", "/api/events/{id}/leave", { params, fallback: "Failed to leave event" });
      setEvent({ ...event, isAttending: data.isAttending, attendeeCount: data.attendeeCount, userRole: data.userRole });
      setPerms(data.permissions);
      window.dispatchEvent(new CustomEvent(ATTENDEES_CHANGED));
    } catch (err) {
      setEvent(before.event);
      setPerms(before.perms);
      setError(err instanceof Error ? err.message : "Network error");
    }
    setBusy(false);
  }

  function startEdit() {
    setForm({
      name: event.name,
      description: event.description,
      location: event.location,
      type: event.type,
      start: toLocalInput(event.startDate),
      end: toLocalInput(event.endDate),
      isFeatured: event.isFeatured,
    });
    setError("");
    setEditing(true);
  }

  async function save(e: React.FormEvent) {
    e.preventDefault();
    if (!form.name.trim()) return setError("Please enter an event name");
    if (!form.start || !form.end) return setError("Please select start and end dates");
    const start = new Date(form.start);
    const end = new Date(form.end);
    if (end <= start) return setError("End date/time must be after start date/time");
    setBusy(true);
    try {
      const body: Body<"PUT", "/api/events/{id}"> = {
        name: form.name.trim(),
        description: form.description,
        location: form.location,
        type: form.type as EventDetail["type"],
        startDate: start.toISOString(),
        endDate: end.toISOString(),
      };
      // An unchanged start is not sent, so editing a past event's text works.
      if (start.getTime() === new Date(event.startDate).getTime()) delete body.startDate;
      if (perms.canFeature) body.isFeatured = form.isFeatured;
      const data = await api("PUT", "/api/events/{id}", { params: { id: event.id }, body, fallback: "Failed to update event" });
      setEvent({ ...event, ...data });
      setEditing(false);
    } catch (err) {
      setError(err instanceof Error ? err.message : "Failed to update event");
    }
    setBusy(false);
  }

  async function remove() {
    if (!window.confirm("Are you sure you want to delete this event?")) return;
    setBusy(true);
    try {
      await api("DELETE", "/api/events/{id}", { params: { id: event.id }, fallback: "Failed to delete event" });
      window.location.href = eventsHref;
    } catch (err) {
      setError(err instanceof Error ? err.message : "Failed to delete event");
      setBusy(false);
    }
  }

  if (editing) {
    return (
      <form className="create-form event-edit" onSubmit={save} data-hydrated="true">
        <label>
          Event name
          <input value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} maxLength={200} required />
        </label>
        <label>
          Description
          <textarea rows={4} value={form.description} onChange={(e) => setForm({ ...form, description: e.target.value })} maxLength={5000} />
        </label>
        <label>
          Type
          <select value={form.type} onChange={(e) => setForm({ ...form, type: e.target.value })}>
            {EVENT_TYPES.map((t) => (
              <option key={t} value={t}>
                {typeLabel(t)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Location
          <input value={form.location} onChange={(e) => setForm({ ...form, location: e.target.value })} maxLength={500} />
        </label>
        <label>
          Start
          <input type="datetime-local" value={form.start} onChange={(e) => setForm({ ...form, start: e.target.value })} />
        </label>
        <label>
          End
          <input type="datetime-local" value={form.end} onChange={(e) => setForm({ ...form, end: e.target.value })} />
        </label>
        {perms.canFeature && (
          <label className="check">
            <input type="checkbox" checked={form.isFeatured} onChange={(e) => setForm({ ...form, isFeatured: e.target.checked })} /> Featured event
          </label>
        )}
        {error && (
          <p className="inline-error" role="alert">
            {error}
          </p>
        )}
        <div className="filter-actions">
          <button className="button" type="submit" disabled={busy}>
            Save Changes
          </button>
          <button className="button button-secondary" type="button" onClick={() => setEditing(false)} disabled={busy}>
            Cancel
          </button>
        </div>
      </form>
    );
  }

  const unlock = event.locked ? unlockOf(event, appPath(props.appName)) : null;
  return (
    <section className="event-details" data-hydrated={hydrated ? "true" : undefined}>
      <h1>{event.name}</h1>
      {event.userRole === "HOST" && <span className="badge">Event Host</span>}
      {event.isFeatured && <span className="badge">Featured</span>}
      {event.description && <p className="post-body">{event.description}</p>}
      {unlock && (
        <div className="locked-post" data-testid="locked-event">
          <p>The details of this event are for {unlock.who}.</p>
          <p>
            <a className="button" href={unlock.href}>
              {unlock.action}
            </a>
          </p>
        </div>
      )}
      <dl className="event-facts">
        <dt>Start</dt>
        <dd>
          <LocalTime iso={event.startDate} />
        </dd>
        <dt>End</dt>
        <dd>
          <LocalTime iso={event.endDate} />
        </dd>
        {event.location && (
          <>
            <dt>Location</dt>
            <dd>{event.location}</dd>
          </>
        )}
        <dt>Type</dt>
        <dd>{typeLabel(event.type)}</dd>
        <dt>Attending</dt>
        <dd className="attendee-count">{event.attendeeCount}</dd>
      </dl>
      <div className="event-actions">
        <a className="button button-secondary" href={calendarHref(props.appName, event.id)} download>
          Add to Calendar
        </a>
        {props.ticket && !props.ticket.held && !event.isAttending ? (
          // A ticketed event is joined by paying for the ticket (the join
          // call refuses); the store's own page sells it, signed in or not.
          <a className="button" href={appPath(props.appName) + "/store/items/" + props.ticket.itemId}>
            Get Ticket
          </a>
        ) : !props.signedIn ? (
          <a className="button" href={props.signInUrl}>
            Sign in to join
          </a>
        ) : (
          (perms.canJoin || perms.canLeave) &&
          !confirming && (
            // Without JavaScript this form posts and the server redirects back
            // (Leave first to the confirmation below).
            <form method="post" action={attendAction} onSubmit={toggleAttendance}>
              <input type="hidden" name="action" value={perms.canJoin ? "join" : "leave"} />
              <button className="button" type="submit" disabled={busy}>
                {perms.canJoin ? (held ? "Rejoin Event" : "Join Event") : "Leave Event"}
              </button>
            </form>
          )
        )}
        {perms.canEdit && (
          <>
            <button className="button button-secondary" type="button" onClick={startEdit} disabled={!hydrated || busy}>
              Edit Event
            </button>
            <button className="button button-secondary" type="button" onClick={remove} disabled={!hydrated || busy}>
              Delete Event
            </button>
          </>
        )}
      </div>
      {confirming && perms.canLeave && (
        <form className="leave-confirm" method="post" action={attendAction} onSubmit={toggleAttendance} aria-labelledby="leave-confirm-title">
          <p id="leave-confirm-title">
            <strong>{"Leave " + event.name + "?"}</strong>
          </p>
          <p>
            {held
              ? "Your ticket stays yours: you can rejoin for free while it is valid. To give the ticket back, ask for a refund from your order."
              : "You will no longer be listed as attending."}
          </p>
          <input type="hidden" name="action" value="leave" />
          <input type="hidden" name="confirm" value="yes" />
          <div className="filter-actions">
            <button className="button" type="submit" disabled={busy}>
              Yes, leave
            </button>
            <a
              className="button button-secondary"
              href={appPath(props.appName) + "/events/" + event.id}
              onClick={(e) => {
                e.preventDefault();
                setConfirming(false);
              }}
            >
              Stay
            </a>
          </div>
        </form>
      )}
      {held && !event.isAttending && !confirming && (
        <p className="hint ticket-held">You hold a ticket to this event: rejoining is free.</p>
      )}
      {error && (
        <p className="inline-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
