// Event helpers shared by the pages and the event islands (pure, no Intl,
// so server and browser agree).
import type { EventView, MediaView } from "./types";

export const EVENT_TYPES = ["LIVESTREAM", "MEETUP", "CLASS", "CONFERENCE", "OTHER"] as const;

const TYPE_LABELS: Record<string, string> = {
  LIVESTREAM: "Livestream",
  MEETUP: "Meetup",
  CLASS: "Class",
  CONFERENCE: "Conference",
  OTHER: "Other",
};

export function typeLabel(t: string): string {
  return TYPE_LABELS[t] ?? t;
}

export type TimeStatus = "upcoming" | "ongoing" | "past";

// timeStatus (SPEC.md section 4): upcoming before start, ongoing from start
// to end inclusive, past after end. nowIso comes from the server's props so
// the first client render matches.
export function timeStatus(e: { startDate: string; endDate: string }, nowIso: string): TimeStatus {
  const now = new Date(nowIso).getTime();
  if (now < new Date(e.startDate).getTime()) return "upcoming";
  if (now <= new Date(e.endDate).getTime()) return "ongoing";
  return "past";
}

export const STATUS_LABELS: Record<TimeStatus, string> = { upcoming: "Upcoming", ongoing: "Happening now", past: "Past" };

export interface AttendeeView {
  id: string;
  userId: string;
  eventId: string;
  role: "HOST" | "MODERATOR" | "ATTENDEE";
  user: { id: string; username: string };
  createdAt: string;
}

export interface EventPermissions {
  canEdit: boolean;
  canJoin: boolean;
  canLeave: boolean;
  canManageAttendees: boolean;
  canFeature: boolean;
}

// EventDetail mirrors server.EventDetail.
export interface EventDetail extends EventView {
  attendees: AttendeeView[];
  attendeePagination: { page: number; limit: number; total: number; totalPages: number; hasNext: boolean; hasPrev: boolean };
  permissions: EventPermissions;
  // The store item that admits to the event; null when joining is free.
  ticket: EventTicket | null;
}

export interface EventTicket {
  itemId: string;
  name: string;
  price: number;
  currency: string;
  // held: the viewer holds a paid ticket, so leaving keeps it and joining
  // again is free.
  held: boolean;
}

// carouselMedia: the banner first, then the other media newest first.
export function carouselMedia(e: EventView): MediaView[] {
  const rest = e.media.filter((m) => !e.banner || m.id !== e.banner.id);
  rest.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  return e.banner ? [e.banner, ...rest] : rest;
}

// calendarHref is the Add to Calendar download.
export function calendarHref(appName: string, eventId: string): string {
  return "/apps/" + appName + "/events/" + eventId + "/calendar.ics";
}

// apiCall sends a JSON request to the events API and returns the envelope's
// data; on failure it throws the server's message, or fallback.
export async function apiCall<T>(method: string, url: string, body: unknown, fallback: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      credentials: "same-origin",
      headers: body === undefined ? undefined : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new Error("Network error");
  }
  const json = await res.json().catch(() => null);
  if (!res.ok || !json?.success) throw new Error((json && typeof json.message === "string" && json.message) || fallback);
  return json.data as T;
}
