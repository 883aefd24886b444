// Event helpers shared by the pages and the event islands (pure, no Intl,
// so server and browser agree).
import type { EventView, MediaView } from "./types";
import { appPath } from "../../islands/lib/links";
import { changesAt } from "./changes";

export type { AttendeeView, EventDetail, EventPermissions, EventTicket } from "./types";

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
  const start = new Date(e.startDate).getTime();
  const end = new Date(e.endDate).getTime();
  if (now < start) {
    changesAt(start);
    return "upcoming";
  }
  if (now <= end) {
    changesAt(end + 1);
    return "ongoing";
  }
  return "past";
}

export const STATUS_LABELS: Record<TimeStatus, string> = { upcoming: "Upcoming", ongoing: "Happening now", past: "Past" };

// carouselMedia: the banner first, then the other media newest first.
export function carouselMedia(e: EventView): MediaView[] {
  const rest = e.media.filter((m) => !e.banner || m.id !== e.banner.id);
  rest.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  return e.banner ? [e.banner, ...rest] : rest;
}

// calendarHref is the Add to Calendar download.
export function calendarHref(appName: string, eventId: string): string {
  return appPath(appName) + "/events/" + eventId + "/calendar.ics";
}
