// Formatting helpers that give the same text under goja (which has no Intl)
// and in every browser, so server HTML and hydrated islands match. All dates
// are shown in UTC for the same reason.

import { agoChangesAt, agoShownOnce } from "./changes";

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const SYMBOLS: Record<string, string> = { USD: "$", EUR: "€", GBP: "£" };

// groupThousands inserts commas: "1234567" -> "1,234,567".
function groupThousands(digits: string): string {
  let out = "";
  for (let i = 0; i < digits.length; i++) {
    if (i > 0 && (digits.length - i) % 3 === 0) out += ",";
    out += digits[i];
  }
  return out;
}

// formatMoney(1234, "USD") -> "$12.34"; negative -> "-$1.00"; unknown
// currencies get their code as prefix ("CAD 5.00").
export function formatMoney(cents: number, currency = "USD"): string {
  const n = Math.round(Number(cents) || 0);
  const abs = Math.abs(n);
  const whole = groupThousands(String(Math.floor(abs / 100)));
  const frac = String(abs % 100).padStart(2, "0");
  const code = currency.toUpperCase();
  const prefix = SYMBOLS[code] ?? code + " ";
  return (n < 0 ? "-" : "") + prefix + whole + "." + frac;
}

function parse(iso: string): Date | null {
  const d = new Date(iso);
  return isNaN(d.getTime()) ? null : d;
}

// formatDate("2026-11-21T18:00:00Z") -> "Nov 21, 2026".
export function formatDate(iso: string): string {
  const d = parse(iso);
  if (!d) return "";
  return MONTHS[d.getUTCMonth()] + " " + d.getUTCDate() + ", " + d.getUTCFullYear();
}

// formatTime12("2026-11-21T18:00:00Z") -> "6:00 PM".
export function formatTime12(iso: string): string {
  const d = parse(iso);
  if (!d) return "";
  const h = d.getUTCHours();
  const m = d.getUTCMinutes();
  return ((h + 11) % 12) + 1 + ":" + String(m).padStart(2, "0") + (h < 12 ? " AM" : " PM");
}

// formatDateTime -> "Nov 21, 2026, 6:00 PM".
export function formatDateTime(iso: string): string {
  const d = parse(iso);
  if (!d) return "";
  return formatDate(iso) + ", " + formatTime12(iso);
}

// relativeTime per SPEC section 9: "just now" under 60 seconds, then "5m ago",
// "3h ago", "2d ago" up to 30 days, then the date, noting when the text will
// change (changes.ts; render.RelativeTime is its Go twin). nowIso is passed
// in so the server and the client agree on "now" during hydration.
export function relativeTime(iso: string, nowIso: string): string {
  agoShownOnce();
  const d = parse(iso);
  const now = parse(nowIso);
  if (!d || !now) return "";
  const at = d.getTime();
  const seconds = Math.floor((now.getTime() - at) / 1000);
  if (seconds < 60) {
    agoChangesAt(at + 60_000);
    return "just now";
  }
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) {
    agoChangesAt(at + (minutes + 1) * 60_000);
    return minutes + "m ago";
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 24) {
    agoChangesAt(at + (hours + 1) * 3_600_000);
    return hours + "h ago";
  }
  const days = Math.floor(hours / 24);
  if (days <= 30) {
    agoChangesAt(at + (days + 1) * 86_400_000);
    return days + "d ago";
  }
  return formatDate(iso);
}

// truncate("hello world", 5) -> "hello..."; text within n is unchanged.
export function truncate(text: string, n: number): string {
  if (!text) return "";
  return text.length > n ? text.slice(0, n) + "..." : text;
}
