import { useEffect, useState } from "react";
import { formatDate, formatTime12 } from "../pages/lib/format";

export interface LocalTimeProps {
  iso: string;
  // withDate: "Nov 21, 2026, 6:00 PM"; otherwise only "6:00 PM".
  withDate?: boolean;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

// local formats in the browser's time zone (12-hour en-US, SPEC.md
// section 9) with the zone's short name.
function local(iso: string, withDate: boolean): string {
  const d = new Date(iso);
  if (isNaN(d.getTime())) return "";
  const h = d.getHours();
  const time = ((h + 11) % 12) + 1 + ":" + String(d.getMinutes()).padStart(2, "0") + (h < 12 ? " AM" : " PM");
  let zone = "";
  try {
    zone = new Intl.DateTimeFormat("en-US", { timeZoneName: "short" }).formatToParts(d).find((p) => p.type === "timeZoneName")?.value ?? "";
  } catch {}
  const date = MONTHS[d.getMonth()] + " " + d.getDate() + ", " + d.getFullYear();
  return (withDate ? date + ", " : "") + time + (zone ? " " + zone : "");
}

// LocalTime renders the UTC text the server rendered (goja has no time
// zones), so hydration matches; after hydration an effect switches to the
// visitor's zone. The effect runs only in the browser, after React has
// compared the markup, so there is no hydration warning.
export default function LocalTime({ iso, withDate = true }: LocalTimeProps) {
  const utc = (withDate ? formatDate(iso) + ", " : "") + formatTime12(iso) + " UTC";
  const [text, setText] = useState(utc);
  useEffect(() => setText(local(iso, withDate)), [iso, withDate]);
  return (
    <time dateTime={iso} data-local={text === utc ? undefined : "true"}>
      {text}
    </time>
  );
}
