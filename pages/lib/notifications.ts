// Shapes and wording of notifications, shared by the Notifications page and
// the header panel.

import type { NotificationView, StorePagination } from "./types";
import { changesAt } from "./changes";

export type { NotificationView, SearchHit, SearchResults } from "./types";
export type NotificationPagination = StorePagination;

// fromLine: 'from @{username}', or 'System' when nobody sent it.
export function fromLine(n: NotificationView): string {
  return n.sender ? "from @" + n.sender.username : "System";
}

// noticeTime per SPEC.md section 2: 'Just now' under an hour, '{n}h ago'
// under a day, else the date. date formats the date (the browser passes its
// local format; the server its fixed one, goja having no Intl).
export function noticeTime(iso: string, nowIso: string, date: (iso: string) => string): string {
  const t = new Date(iso).getTime();
  const now = new Date(nowIso).getTime();
  if (isNaN(t) || isNaN(now)) return "";
  const hours = Math.floor((now - t) / 3600000);
  if (hours < 24) changesAt(t + (Math.max(hours, 0) + 1) * 3600000);
  if (hours < 1) return "Just now";
  if (hours < 24) return hours + "h ago";
  return date(iso);
}

export const kindLabels: Record<string, string> = {
  NEW_POST: "New posts",
  NEW_EVENT: "New events",
  REPLY: "Replies to my posts and comments",
  EVENT_UPDATE: "Changes to events I attend",
  ORDER_STATUS: "My orders",
  NEW_ORDER: "New orders (creator and admins)",
  DONATION: "Donations (creator and admins)",
  MEMBERSHIP_LAPSING: "My membership (started, renewed, payment failed, ended)",
  NEW_MEMBER: "New members (creator and admins)",
  NEWSLETTER: "The newsletter (posts mailed by the creator)",
};
