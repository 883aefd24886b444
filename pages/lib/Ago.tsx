import { relativeTime } from "./format";

// Ago shows how long ago iso was, as of now ("5m ago"), marked so that the
// server can bring a cached page's relative times up to date without
// rendering it again (render.Restamp reads exactly this markup, and
// refuses a page showing a relative time outside an Ago).
export function Ago({ iso, now }: { iso: string; now: string }) {
  return (
    <time dateTime={iso} data-ago="">
      {relativeTime(iso, now)}
    </time>
  );
}
