import { useEffect, useRef, useState } from "react";
import { dropSiteWideWorker, registerWorker } from "./lib/worker";

export interface AppChromeProps {
  appName: string;
  title: string;
  // The app is at the root of its own domain (its worker's scope is "/"),
  // not under /apps/{name}/ on the main site.
  onDomain?: boolean;
}

// SPEC.md section 9.
export const PULL_FACTOR = 0.3;
export const PULL_MAX = 120;
export const PULL_HINT = 20;
export const PULL_REFRESH = 30;
export const HEADER_HIDE_DELTA = 5;
export const HEADER_ALWAYS_BELOW = 100;
export const INSTALL_DISMISS_MS = 7 * 24 * 60 * 60 * 1000;
export const INSTALL_DISMISS_KEY = "marquee:install-dismissed";

type InstallPrompt = Event & { prompt: () => Promise<void>; userChoice: Promise<{ outcome: string }> };

function standalone(): boolean {
  return window.matchMedia?.("(display-mode: standalone)").matches || (navigator as any).standalone === true;
}

// iosSafari: only Safari on iOS adds to the home screen by its Share menu
// (the how-to); Chrome, Firefox, Edge and in-app browsers there cannot, and
// everywhere else a browser that can install says so with
// beforeinstallprompt.
export function iosSafari(ua: string): boolean {
  return /iphone|ipad|ipod/i.test(ua) && /safari/i.test(ua) && !/crios|fxios|edgios|opios|gsa\/|fban|fbav|instagram|line\//i.test(ua);
}

function dismissedRecently(): boolean {
  try {
    const at = Number(localStorage.getItem(INSTALL_DISMISS_KEY) || 0);
    return at > 0 && Date.now() - at < INSTALL_DISMISS_MS;
  } catch {
    return false;
  }
}

// AppChrome is what makes the site feel like an installed app: it registers
// the service worker, offers installing (with the iOS how-to, dismissed for
// a week), reloads on pull-to-refresh and hides the header while scrolling
// down. It renders nothing on the server.
export default function AppChrome(props: AppChromeProps) {
  const [banner, setBanner] = useState<"none" | "prompt" | "ios">("none");
  const [pull, setPull] = useState(0);
  const prompt = useRef<InstallPrompt | null>(null);

  // Service worker: the app's own on this origin (islands/lib/worker.ts).
  useEffect(() => {
    if ("serviceWorker" in navigator) {
      const app = { name: props.appName, onDomain: props.onDomain };
      registerWorker(app)
        .then(() => dropSiteWideWorker(app))
        .catch((err) => console.error("marquee: service worker", err));
    }
  }, [props.appName, props.onDomain]);

  // Install banner.
  useEffect(() => {
    if (standalone() || dismissedRecently()) return;
    if (iosSafari(navigator.userAgent)) {
      setBanner("ios");
      return;
    }
    const onPrompt = (e: Event) => {
      e.preventDefault();
      prompt.current = e as InstallPrompt;
      setBanner("prompt");
    };
    window.addEventListener("beforeinstallprompt", onPrompt);
    return () => window.removeEventListener("beforeinstallprompt", onPrompt);
  }, []);

  // Pull-to-refresh: only from the very top of the page.
  useEffect(() => {
    let startY: number | null = null;
    let distance = 0;
    const start = (e: TouchEvent) => {
      startY = window.scrollY <= 0 && e.touches.length === 1 ? e.touches[0].clientY : null;
      distance = 0;
    };
    const move = (e: TouchEvent) => {
      if (startY === null) return;
      distance = Math.min(Math.max(0, (e.touches[0].clientY - startY) * PULL_FACTOR), PULL_MAX);
      setPull(distance);
    };
    const end = () => {
      if (startY !== null && distance > PULL_REFRESH) {
        window.location.reload();
      }
      startY = null;
      distance = 0;
      setPull(0);
    };
    window.addEventListener("touchstart", start, { passive: true });
    window.addEventListener("touchmove", move, { passive: true });
    window.addEventListener("touchend", end);
    window.addEventListener("touchcancel", end);
    return () => {
      window.removeEventListener("touchstart", start);
      window.removeEventListener("touchmove", move);
      window.removeEventListener("touchend", end);
      window.removeEventListener("touchcancel", end);
    };
  }, []);

  // Scroll header: hides after 5 px down, shows on the way up, and always
  // under 100 px from the top.
  useEffect(() => {
    const header = document.querySelector<HTMLElement>(".app-header");
    if (!header) return;
    let last = window.scrollY;
    const onScroll = () => {
      const y = window.scrollY;
      if (y < HEADER_ALWAYS_BELOW) header.classList.remove("header-hidden");
      else if (y - last > HEADER_HIDE_DELTA) header.classList.add("header-hidden");
      else if (last - y > HEADER_HIDE_DELTA) header.classList.remove("header-hidden");
      if (Math.abs(y - last) > HEADER_HIDE_DELTA || y < HEADER_ALWAYS_BELOW) last = y;
    };
    window.addEventListener("scroll", onScroll, { passive: true });
    return () => window.removeEventListener("scroll", onScroll);
  }, []);

  function dismiss() {
    try {
      localStorage.setItem(INSTALL_DISMISS_KEY, String(Date.now()));
    } catch {
      // Private mode: the banner comes back next visit, nothing worse.
    }
    setBanner("none");
  }

  async function install() {
    const p = prompt.current;
    if (!p) return;
    await p.prompt();
    await p.userChoice.catch(() => null);
    prompt.current = null;
    setBanner("none");
  }

  return (
    <>
      {pull > 0 && (
        <div className="pull-indicator" style={{ height: pull }} aria-live="polite">
          {pull > PULL_HINT && <span>{pull > PULL_REFRESH ? "Release to refresh" : "Pull to refresh"}</span>}
        </div>
      )}
      {banner !== "none" && (
        <div className="install-banner" role="region" aria-label="Install app">
          <img src="/static/icon.svg" alt="" width={40} height={40} loading="lazy" decoding="async" />
          <div className="install-text">
            <strong>{"Install " + props.title}</strong>
            {banner === "ios" ? (
              <span>
                In Safari, tap <strong>Share</strong> (the square with an arrow), then <em>Add to Home Screen</em>.
              </span>
            ) : (
              <span>Add it to your home screen for quick access.</span>
            )}
          </div>
          {banner === "prompt" && (
            <button type="button" className="button" onClick={install}>
              Install
            </button>
          )}
          <button type="button" className="icon-button" aria-label="Dismiss install banner" onClick={dismiss}>
            ×
          </button>
        </div>
      )}
    </>
  );
}
