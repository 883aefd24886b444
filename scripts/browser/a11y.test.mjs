import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { useServerAndBrowser, signIn, root } from "./helpers.mjs";

// Accessibility (issue 27, item 6): axe-core runs on every public and
// member page at phone width and finds nothing: WCAG 2.x A and AA, and
// axe's best practices (heading order, one <h1>, landmarks).
const env = useServerAndBrowser();
const AXE = join(root, "node_modules", "axe-core", "axe.min.js");
const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"];

async function axe(page) {
  await page.addScriptTag({ path: AXE });
  return page.evaluate(async (tags) => {
    const res = await window.axe.run(document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] });
    return res.violations.map((v) => `${v.id} (${v.impact}): ${v.help}\n    ` + v.nodes.slice(0, 4).map((n) => n.target.join(" ") + " " + (n.failureSummary || "").split("\n").slice(1, 2).join("")).join("\n    "));
  }, TAGS);
}

async function firstHref(page, path, pattern) {
  await page.goto(env.server.base + path);
  const hrefs = await page.$$eval("a[href]", (as) => as.map((a) => a.getAttribute("href")));
  return hrefs.find((h) => pattern.test(h));
}

async function check(page, paths) {
  const found = {};
  for (const path of paths) {
    await page.goto(env.server.base + path);
    await page.waitForLoadState("load");
    // Islands hydrate when the browser is idle: check the hydrated page.
    await page.evaluate(() => new Promise((r) => requestIdleCallback(() => r(), { timeout: 1000 })));
    const v = await axe(page);
    if (v.length) found[path] = v;
  }
  return found;
}

test("axe finds nothing on the public pages (visitor, 390 px)", async () => {
  // bypassCSP lets the test add axe's script; the pages' own CSP is unchanged.
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 }, bypassCSP: true });
  const page = await context.newPage();
  // A visitor reaches items and events from the landing page.
  const item = await firstHref(page, "/apps/demo", /\/store\/items\/[a-z2-7]{26}$/);
  const event = await firstHref(page, "/apps/demo", /\/events\/[a-z2-7]{26}$/);
  assert.ok(item && event, "the landing page links an item and an event");
  const found = await check(page, ["/apps", "/apps/demo", "/apps/demo/store", item, "/apps/demo/events", event]);
  await page.goto(env.server.auth + "/authenticate/signin?app=demo");
  const signin = await axe(page);
  if (signin.length) found.signin = signin;
  await page.goto(env.server.auth + "/authenticate/signup?app=demo");
  const signup = await axe(page);
  if (signup.length) found.signup = signup;
  assert.deepEqual(found, {}, "\n" + Object.entries(found).map(([p, v]) => p + "\n  " + v.join("\n  ")).join("\n"));
  await context.close();
});

test("axe finds nothing on the member pages (390 px)", async () => {
  const { context, page } = await signIn(env, "creator@demo.test", "demo-password", { bypassCSP: true });
  const post = await firstHref(page, "/apps/demo/community", /\/posts\/[a-z2-7]{26}$/);
  const item = await firstHref(page, "/apps/demo/store", /\/store\/items\/[a-z2-7]{26}$/);
  const event = await firstHref(page, "/apps/demo/events", /\/events\/[a-z2-7]{26}$/);
  const found = await check(page, [
    "/apps/demo", "/apps/demo/community", post, "/apps/demo/store", item, "/apps/demo/cart", "/apps/demo/events", event,
    "/apps/demo/create-event", "/apps/demo/create-post", "/apps/demo/create-story", "/apps/demo/store/items/new",
    "/apps/demo/donate", "/apps/demo/profile", "/apps/demo/orders", "/apps/demo/transactions", "/apps/demo/notifications",
    "/apps/demo/search?q=tour", "/apps/demo/manage/orders", "/apps/demo/donations",
  ]);
  assert.deepEqual(found, {}, "\n" + Object.entries(found).map(([p, v]) => p + "\n  " + v.join("\n  ")).join("\n"));
  await context.close();
});
