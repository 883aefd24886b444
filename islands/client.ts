// The islands boot module: the one script a page with islands names. It
// fetches the runtime (React and the hydration code, islands/lib/runtime.ts)
// and the page's islands only once the page has loaded and painted. Every
// page works without JavaScript, so the first paint needs none of it, and
// fetched any earlier it would count against the paint in Lighthouse's
// simulation: Lantern puts on the first paint's path every high-priority
// script that finished before the first paint it observed, and on the
// largest paint's path every script that finished before that one, whatever
// its priority (docs/BENCHMARKS.md, issue 27). So this module stays tiny,
// with no static imports, and the document loads it at low priority.

// preload fetches what the server listed (the runtime's chunks and those of
// the islands that hydrate at once) in parallel, instead of one import
// after another as each module names the next.
function preload(): void {
  let urls: unknown = [];
  try {
    urls = JSON.parse(document.getElementById("marquee-preload")?.textContent || "[]");
  } catch (err) {
    console.error("marquee: bad preload list", err);
  }
  if (!Array.isArray(urls)) return;
  for (const url of urls) {
    const link = document.createElement("link");
    link.rel = "modulepreload";
    link.href = url;
    document.head.appendChild(link);
  }
}

function boot(): void {
  preload();
  import("./lib/runtime").then(
    (runtime) => runtime.start(),
    (err) => console.error("marquee: islands runtime failed to load", err),
  );
}

// afterPaint runs fn once the page has loaded and painted: after the load
// event, once the browser reports its first contentful paint (the entry
// comes after the frame is on screen: on a busy machine the main thread
// reaches the next frame's callbacks before the first one is shown), and
// after one more frame, as the load event can come just before the frame
// that shows the last image loaded.
function afterPaint(fn: () => void): void {
  let done = false;
  const go = () => {
    if (done) return;
    done = true;
    // A hidden tab runs no animation frames (and paints nothing).
    if (document.visibilityState === "hidden") setTimeout(fn, 0);
    else requestAnimationFrame(() => setTimeout(fn, 0));
  };
  if (document.visibilityState === "hidden" || typeof PerformanceObserver === "undefined" || !PerformanceObserver.supportedEntryTypes?.includes("paint")) return go();
  const painted = (entries: PerformanceEntryList) => entries.some((e) => e.name === "first-contentful-paint");
  if (painted(performance.getEntriesByType("paint"))) return go();
  const observer = new PerformanceObserver((list) => {
    if (!painted(list.getEntries())) return;
    observer.disconnect();
    go();
  });
  observer.observe({ type: "paint" });
  // Should no paint be reported (a tab hidden meanwhile), hydrate anyway.
  setTimeout(() => {
    observer.disconnect();
    go();
  }, 3000);
}

const start = () => afterPaint(boot);
if (document.readyState === "complete") start();
else window.addEventListener("load", start, { once: true });
