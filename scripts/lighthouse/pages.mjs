// Lighthouse over the seeded demo's pages, shared by the report
// (scripts/lighthouse/main.mjs, `make lighthouse`) and the accessibility test
// (scripts/browser/lighthouse.test.mjs). Lighthouse's default config is the
// mobile preset: a mid-range phone on slow 4G, simulated throttling (the page
// loads at full speed and Lighthouse computes the throttled timings from the
// trace, so a busy CPU shows up in the performance score).
import * as chromeLauncher from "chrome-launcher";
import lighthouse from "lighthouse";

export const CATEGORIES = ["performance", "accessibility", "best-practices", "seo"];

// The demo member whose pages are audited: a paying subscriber, the member a
// creator's fans are.
export const MEMBER_EMAIL = "subscriber@demo.test";

// launchChrome starts the system's Chromium for Lighthouse (one for a whole
// run: each audit opens its own tab).
export function launchChrome() {
  return chromeLauncher.launch({
    chromePath: process.env.CHROME_PATH || "/usr/bin/chromium",
    chromeFlags: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
}

// firstHref is the first link on the page at url whose href matches pattern.
async function firstHref(url, pattern, cookie = "") {
  const res = await fetch(url, { headers: cookie ? { Cookie: cookie } : {} });
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  for (const m of (await res.text()).matchAll(/href="([^"]+)"/g)) {
    if (pattern.test(m[1])) return m[1];
  }
  throw new Error(`no link matching ${pattern} on ${url}`);
}

// signInCookie signs the member in through the auth site's form (as a
// browser without JavaScript does) and returns the session's Cookie header.
export async function signInCookie(server, email = MEMBER_EMAIL, password = "demo-password") {
  const res = await fetch(server.auth + "/authenticate/signin?app=demo", {
    method: "POST",
    body: new URLSearchParams({ email, password }),
    redirect: "manual",
  });
  const session = res.headers.getSetCookie().find((c) => c.startsWith("marquee_session="));
  if (res.status !== 303 || !session) throw new Error(`sign-in as ${email}: ${res.status}, no session cookie`);
  return session.split(";")[0];
}

// demoPages lists every page a visitor of the demo app sees (those of the
// main site, then the auth site's) and the main signed-in member pages.
// A post, an item and an event are the first ones the landing page links.
export async function demoPages(server) {
  const base = server.base;
  const landing = base + "/apps/demo";
  const post = await firstHref(landing, /^\/apps\/demo\/posts\/[a-z2-7]{26}$/);
  const item = await firstHref(landing, /^\/apps\/demo\/store\/items\/[a-z2-7]{26}$/);
  const event = await firstHref(landing, /^\/apps\/demo\/events\/[a-z2-7]{26}$/);
  const visitor = [
    ["apps", base + "/apps"],
    ["landing", landing],
    ["community", base + "/apps/demo/community"],
    ["post", base + post],
    ["store", base + "/apps/demo/store"],
    ["item", base + item],
    ["events", base + "/apps/demo/events"],
    ["event", base + event],
    ["profile", base + "/apps/demo/profile"],
    ["chat", base + "/apps/demo/chat"],
    ["signin", server.auth + "/authenticate/signin?app=demo"],
    ["signup", server.auth + "/authenticate/signup?app=demo"],
    ["forgot", server.auth + "/authenticate/forgot?app=demo"],
  ];
  const member = [
    ["landing", landing],
    ["community", base + "/apps/demo/community"],
    ["cart", base + "/apps/demo/cart"],
    ["profile", base + "/apps/demo/profile"],
    ["notifications", base + "/apps/demo/notifications"],
    ["donate", base + "/apps/demo/donate"],
    ["orders", base + "/apps/demo/orders"],
  ];
  return {
    visitor: visitor.map(([name, url]) => ({ name, url, viewer: "visitor" })),
    member: member.map(([name, url]) => ({ name: "member " + name, url, viewer: "member" })),
  };
}

// QUICK shortens Lighthouse's waits after the load (a second each for the
// network and the CPU to go quiet) for audits that need no timings: the
// accessibility test. The page still loads fully and its load-time islands
// hydrate before the audit reads it.
const QUICK = {
  extends: "lighthouse:default",
  settings: {
    pauseAfterFcpMs: 0, pauseAfterLoadMs: 250, networkQuietThresholdMs: 250, cpuQuietThresholdMs: 250,
    disableFullPageScreenshot: true, skipAboutBlank: true, disableStorageReset: true,
  },
};

// audit runs Lighthouse (mobile preset) on url in chrome and returns its
// result (lhr). cookie, when given, is sent with every request of the page;
// quick uses QUICK (no performance figures).
export async function audit(chrome, url, { categories = CATEGORIES, cookie = "", quick = false } = {}) {
  const flags = { port: chrome.port, onlyCategories: categories, logLevel: "error", output: "json" };
  if (cookie) flags.extraHeaders = { Cookie: cookie };
  const result = await lighthouse(url, flags, quick ? QUICK : undefined);
  if (!result) throw new Error(`lighthouse returned nothing for ${url}`);
  const { lhr } = result;
  if (lhr.runtimeError) throw new Error(`lighthouse ${url}: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
  // A page answered with an error (or a redirect to sign-in) is not the
  // page meant to be measured.
  if (lhr.finalDisplayedUrl.split("#")[0] !== url) throw new Error(`lighthouse ${url}: ended on ${lhr.finalDisplayedUrl}`);
  return lhr;
}

// scores maps each category of lhr to its score out of 100.
export function scores(lhr) {
  return Object.fromEntries(Object.entries(lhr.categories).map(([id, c]) => [id, c.score === null ? null : Math.round(c.score * 100)]));
}

// failing lists what costs lhr points: in accessibility, best practices and
// SEO every scored audit below 1; in performance the metrics and the
// insights/diagnostics below 0.9 (Lighthouse's own "passed" line). Each is
// "category: id (display value): title" and up to three offending nodes or URLs.
export function failing(lhr) {
  const out = [];
  for (const [catId, cat] of Object.entries(lhr.categories)) {
    for (const ref of cat.auditRefs) {
      const a = lhr.audits[ref.id];
      if (!a || a.score === null || a.scoreDisplayMode === "informative" || a.scoreDisplayMode === "notApplicable" || a.scoreDisplayMode === "manual") continue;
      const limit = catId === "performance" ? 0.9 : 1;
      if (a.score >= limit) continue;
      if (catId !== "performance" && ref.weight === 0) continue;
      const items = (a.details?.items ?? []).slice(0, 3).map((it) => it.node?.selector || it.node?.snippet || it.url || it.source?.url || it.label || "").filter(Boolean);
      out.push(`${catId}: ${a.id}${a.displayValue ? " (" + a.displayValue + ")" : ""}: ${a.title}` + items.map((i) => "\n      " + String(i).slice(0, 160)).join(""));
    }
  }
  return out;
}
