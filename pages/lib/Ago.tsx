import { agoRendered } from "./changes";
import { relativeTime } from "./format";

// Ago shows how long ago iso was, as of now ("5m ago"), marked so that the
// server can bring a cached page's relative times up to date without
// rendering it again (render.Restamp reads exactly this markup).
export function Ago({ iso, now }: { iso: string; now: string }) {
  agoRendered();
  return (
    <time dateTime={iso} data-ago="">
      {relativeTime(iso, now)}
    </time>
  );
}
