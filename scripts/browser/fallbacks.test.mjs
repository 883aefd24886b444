import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { useServerAndBrowser, signIn, screenshotDir } from "./helpers.mjs";

// Four of SPEC.md section 8's fallback texts that only the browser shows
// (issue 27, item 8): each island's call failing, by the network
// (page.route aborts it) or by the server.
// Pages are not rendered ahead here: the first test needs the landing
// unmade when the demo's table goes (rendered ahead, it is served as made).
const env = useServerAndBrowser({ RENDER_AHEAD: "false" });

const sql = (q) => execFileSync("sqlite3", ["-cmd", ".timeout 5000", env.server.env.DATABASE_URL, q], { stdio: "pipe" });

// First, while nothing has loaded the demo app yet: its table is gone.
test("landing: Retry says 'Failed to fetch landing data: 500', 'Failed to load landing page' offline, and reloads once the app loads", async () => {
  sql('ALTER TABLE "apps" RENAME TO "apps_away"');
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  try {
    const res = await page.goto(env.server.base + "/apps/demo");
    assert.equal(res.status(), 503);
    const state = page.locator('.state-error[data-hydrated="true"]');
    await state.waitFor();
    assert.match(await state.innerText(), /Failed to load landing page/);
    // The landing call fails as the page did (the API's 500 for a failed query).
    await state.locator("a", { hasText: "Retry" }).click();
    await state.locator("p", { hasText: "Failed to fetch landing data: 500" }).waitFor();
    await page.screenshot({ path: join(screenshotDir, "fallbacks-landing-390x844.png"), fullPage: true });

    await page.route("**/api/app/*/landing", (route) => route.abort("internetdisconnected"));
    await state.locator("a", { hasText: "Retry" }).click();
    await state.locator("p", { hasText: /^Failed to load landing page$/ }).waitFor();
    await page.unroute("**/api/app/*/landing");
  } finally {
    sql('ALTER TABLE "apps_away" RENAME TO "apps"');
  }
  await Promise.all([page.waitForLoadState("load"), page.locator(".state-error a", { hasText: "Retry" }).click()]);
  await page.locator(".state-error").waitFor({ state: "detached" });
  await context.close();
});

test("post: the like button says 'Failed to fetch reactions' when the reactions call fails", async () => {
  const { context, page } = await signIn(env, "follower@demo.test");
  await page.goto(env.server.base + "/apps/demo/community");
  const href = await page.locator(".feed-card a[href*='/posts/']").first().getAttribute("href");
  await page.route("**/api/messages/*/reactions", (route) =>
    route.request().method() === "GET" ? route.abort("internetdisconnected") : route.continue(),
  );
  await page.goto(env.server.base + href);
  await page.locator(".like [role=alert]", { hasText: "Failed to fetch reactions" }).waitFor();
  await page.screenshot({ path: join(screenshotDir, "fallbacks-reactions-390x844.png"), fullPage: true });
  await context.close();
});

test("community: a failed stories strip retries in place: 'Network error while fetching stories', then 'Failed to fetch stories', then the strip", async () => {
  // The service worker answers navigations once it controls the page, and
  // page.route never sees what a service worker fetches: the rewritten
  // community page below reached the browser only when the worker had not
  // taken over yet (it failed in full runs, passed alone). Blocked here.
  const { context, page } = await signIn(env, "follower@demo.test", "demo-password", { viewport: { width: 1280, height: 900 }, serviceWorkers: "block" });
  // The server says the strip failed (as TestSpecFallbackPartsFail makes it).
  await page.route("**/apps/demo/community", async (route) => {
    const res = await route.fetch();
    const html = (await res.text()).replace("&quot;retryHref&quot;:", "&quot;loadError&quot;:&quot;Failed to fetch stories&quot;,&quot;retryHref&quot;:");
    assert.match(html, /loadError/);
    await route.fulfill({ response: res, body: html });
  });
  await page.goto(env.server.base + "/apps/demo/community");
  const alert = page.locator(".stories-error");
  await alert.waitFor();
  await page.locator('.stories[data-hydrated="true"]').waitFor();

  let calls = 0;
  await page.route("**/api/community/*/stories", (route) => {
    calls++;
    if (calls === 1) return route.abort("internetdisconnected");
    if (calls === 2) return route.fulfill({ status: 500, contentType: "application/json", body: '{"success":false,"message":"boom","error":"boom"}' });
    return route.continue();
  });
  await alert.locator("a", { hasText: "Retry" }).click();
  await alert.filter({ hasText: "Network error while fetching stories" }).waitFor();
  await page.screenshot({ path: join(screenshotDir, "fallbacks-stories-1280x900.png") });
  await alert.locator("a", { hasText: "Retry" }).click();
  await alert.filter({ hasText: /^Failed to fetch stories/ }).waitFor();
  await alert.locator("a", { hasText: "Retry" }).click();
  await alert.waitFor({ state: "detached" });
  assert.ok((await page.locator(".story-strip .story-thumb").count()) > 1, "the strip is back");
  assert.equal(calls, 3);
  await context.close();
});
