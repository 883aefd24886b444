import { useEffect, useState } from "react";
import { useHydrated } from "./lib/hydrated";
import { type AttendeeView } from "../pages/lib/events";
import { api, request } from "./lib/api";
import { ATTENDEES_CHANGED } from "./EventDetails";

export interface EventAttendeesProps {
  eventId: string;
  attendees: AttendeeView[];
  total: number;
  canManage: boolean;
}

// EventAttendees lists who attends; the host, event moderators and the
// app's staff (canManage, decided on the server) promote, demote and remove.
// The host's row never offers an action.
export default function EventAttendees(props: EventAttendeesProps) {
  const hydrated = useHydrated();
  const [list, setList] = useState(props.attendees);
  const [total, setTotal] = useState(props.total);
  const [busy, setBusy] = useState("");

  async function reload() {
    try {
      const { data, pagination } = await request("GET", "/api/events/{id}/attendees", { params: { id: props.eventId }, query: { page: 1, limit: 50 } });
      setList(data);
      setTotal(pagination?.total ?? data.length);
    } catch {
      // Failures here are only logged (SPEC.md section 8).
    }
  }

  useEffect(() => {
    window.addEventListener(ATTENDEES_CHANGED, reload);
    return () => window.removeEventListener(ATTENDEES_CHANGED, reload);
  }, []);

  async function setRole(a: AttendeeView, role: "MODERATOR" | "ATTENDEE") {
    setBusy(a.userId);
    try {
      await api("PUT", "/api/events/{id}/attendees/{userId}", { params: { id: props.eventId, userId: a.userId }, body: { role }, fallback: "Failed to update attendee" });
      await reload();
    } catch (err) {
      console.error(err);
    }
    setBusy("");
  }

  async function remove(a: AttendeeView) {
    if (!window.confirm("Are you sure you want to remove this attendee?")) return;
    setBusy(a.userId);
    try {
      await api("DELETE", "/api/events/{id}/attendees/{userId}", { params: { id: props.eventId, userId: a.userId }, fallback: "Failed to remove attendee" });
      await reload();
    } catch (err) {
      console.error(err);
    }
    setBusy("");
  }

  return (
    <section className="attendees" aria-label="Attendees" data-hydrated={hydrated ? "true" : undefined}>
      <h2>{"Attendees (" + total + ")"}</h2>
      <ul className="attendee-list">
        {list.map((a) => (
          <li key={a.id} className="attendee" data-user={a.user.username}>
            <span>@{a.user.username}</span>
            {a.role !== "ATTENDEE" && <span className="badge">{a.role === "HOST" ? "Event Host" : "Moderator"}</span>}
            {props.canManage && a.role !== "HOST" && (
              <span className="attendee-actions">
                <button type="button" className="button button-secondary" disabled={!hydrated || busy === a.userId}
                  onClick={() => setRole(a, a.role === "MODERATOR" ? "ATTENDEE" : "MODERATOR")}>
                  {a.role === "MODERATOR" ? "Remove Moderator" : "Make Moderator"}
                </button>
                <button type="button" className="button button-secondary" disabled={!hydrated || busy === a.userId} onClick={() => remove(a)}>
                  Remove
                </button>
              </span>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
