// The islands client runtime, imported by the boot module (islands/client.ts)
// once the page has painted. The server document lists the URLs of the
// islands it used in <script id="marquee-islands">; this hydrates each
// <marquee-island> marker when its `data-when` says. It must never throw:
// one broken island should not stop the others.
import { createElement, Fragment, useEffect, type ComponentType, type ReactNode } from "react";
import { hydrateRoot } from "react-dom/client";

type IslandModule = { default: ComponentType<any> };

function readURLs(): Record<string, string> {
  const el = document.getElementById("marquee-islands");
  if (!el || !el.textContent) return {};
  try {
    return JSON.parse(el.textContent);
  } catch (err) {
    console.error("marquee: bad island map", err);
    return {};
  }
}

// Live marks an island's element once React has hydrated it (a parent's
// effects run after its children's), so a test, or a style, can tell when a
// click reaches the island rather than the server's plain form.
function Live({ el, children }: { el: HTMLElement; children?: ReactNode }) {
  useEffect(() => {
    el.dataset.live = "true";
  }, [el]);
  return createElement(Fragment, null, children);
}

async function hydrate(el: HTMLElement, url: string, index: number): Promise<void> {
  const name = el.dataset.island;
  try {
    const props = JSON.parse(el.dataset.props || "{}");
    const mod = (await import(url)) as IslandModule;
    // Each island is its own React root, so a distinct prefix keeps useId
    // values unique across the page. (Server-rendered ids come from the page
    // tree and will differ: islands should not put useId into the markup.)
    hydrateRoot(el, createElement(Live, { el }, createElement(mod.default, props)), {
      identifierPrefix: "i" + index + "-",
      onRecoverableError: (err) => console.error("marquee: island " + name + " recovered", err),
    });
  } catch (err) {
    console.error("marquee: island " + name + " failed", err);
  }
}

function whenIdle(fn: () => void): void {
  if ("requestIdleCallback" in window) window.requestIdleCallback(fn, { timeout: 2000 });
  else setTimeout(fn, 200);
}

function whenVisible(el: HTMLElement, fn: () => void): void {
  if (!("IntersectionObserver" in window)) return fn();
  // display: contents elements have no box, so observe the first child.
  const target = (el.firstElementChild as HTMLElement | null) ?? el;
  const io = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) {
      io.disconnect();
      fn();
    }
  }, { rootMargin: "200px" });
  io.observe(target);
}

export function start(): void {
  const urls = readURLs();
  document.querySelectorAll<HTMLElement>("marquee-island").forEach((el, index) => {
    try {
      const name = el.dataset.island || "";
      const url = urls[name];
      if (!url) {
        console.error("marquee: no bundle for island " + name);
        return;
      }
      const run = () => void hydrate(el, url, index);
      switch (el.dataset.when) {
        case "idle":
          whenIdle(run);
          break;
        case "visible":
          whenVisible(el, run);
          break;
        default:
          run();
      }
    } catch (err) {
      console.error("marquee: island setup failed", err);
    }
  });
}
