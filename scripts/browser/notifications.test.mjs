import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { useServerAndBrowser, signIn, watchErrors } from "./helpers.mjs";

const env = useServerAndBrowser();

// unreadReaches waits until the fan-out jobs (run in the background) have
// written n unread notifications for the page's user.
async function unreadReaches(page, n) {
  let total = -1;
  for (let i = 0; i < 100 && total !== n; i++) {
    if (i > 0) await page.waitForTimeout(200);
    total = await page.evaluate(async () => (await (await fetch("/api/notifications/unread/demo?limit=1")).json()).data.pagination.total);
  }
  assert.equal(total, n, "unread notifications written by the fan-out jobs");
}
const shots = process.env.SHOTS_DIR || "/tmp/shots-notify";

// post creates posts as the signed-in page's user, through the JSON API.
async function post(page, texts) {
  return page.evaluate(async (texts) => {
    const landing = await (await fetch("/api/app/demo/landing")).json();
    const communityId = landing.data.community.id;
    for (const content of texts) {
      const res = await fetch("/api/messages", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ content, type: "POST", communityId }),
      });
      if (res.status !== 201) throw new Error("post " + res.status + " " + (await res.text()));
    }
  }, texts);
}

test("the bell badge appears after the creator posts; the panel pages and marks read", async () => {
  const follower = await signIn(env, "follower@demo.test");
  const errors = watchErrors(follower.page);
  const page = follower.page;
  await page.goto(env.server.base + "/apps/demo");
  await page.locator('.header-actions[data-hydrated="true"]').waitFor();
  assert.equal(await page.locator(".badge-count").count(), 0, "no badge before anything happened");

  const creator = await signIn(env, "creator@demo.test");
  await creator.page.goto(env.server.base + "/apps/demo");
  await post(creator.page, ["Studio tour this Friday"]);

  await unreadReaches(page, 1);
  await page.reload();
  await page.locator(".badge-count", { hasText: "1" }).waitFor();
  await page.screenshot({ path: join(shots, "bell-badge.png") });

  // 21 more: two pages of 20.
  await post(creator.page, Array.from({ length: 21 }, (_, i) => "Update number " + (i + 1)));
  await unreadReaches(page, 22);
  await page.reload();
  await page.locator(".badge-count", { hasText: "22" }).waitFor();
  await page.locator("a.bell").click();
  const panel = page.locator('aside[aria-label="Notifications"]');
  await panel.locator(".notification-list li").first().waitFor();
  assert.equal(await panel.locator(".notification-list li").count(), 20);
  assert.match(await panel.innerText(), /from @creator/);
  assert.match(await panel.innerText(), /Just now/);
  assert.match(await panel.locator(".pager").innerText(), /1 of 2/);
  assert.equal(await page.locator(".overlay").count(), 1, "the panel has its overlay");
  await page.screenshot({ path: join(shots, "panel-page1.png") });
  await panel.locator("button", { hasText: "Next" }).click();
  await panel.locator(".pager", { hasText: "2 of 2" }).waitFor();
  assert.equal(await panel.locator(".notification-list li").count(), 2);
  assert.match(await panel.innerText(), /Studio tour this Friday/);
  await panel.locator("button", { hasText: "Mark All as Read" }).click();
  await panel.locator(".empty", { hasText: "No notifications yet" }).waitFor();
  assert.equal(await page.locator(".badge-count").count(), 0, "badge gone after Mark All as Read");
  await page.screenshot({ path: join(shots, "panel-empty.png") });
  await page.reload();
  await page.locator('.header-actions[data-hydrated="true"]').waitFor();
  await page.waitForTimeout(300);
  assert.equal(await page.locator(".badge-count").count(), 0, "still read after a reload");
  assert.deepEqual(errors, []);
  await follower.context.close();
  await creator.context.close();
});

test("without JavaScript the bell is a link to the notifications page", async () => {
  const context = await env.browser.newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await page.goto(env.server.auth + "/authenticate/signin?app=demo");
  await page.fill('[name="email"]', "moderator@demo.test");
  await page.fill('[name="password"]', "demo-password");
  await Promise.all([page.waitForURL((u) => u.toString().startsWith(env.server.base)), page.locator('form button[type="submit"]').click()]);
  await Promise.all([page.waitForURL(/\/apps\/demo\/notifications$/), page.locator("a.bell").click()]);
  assert.match(await page.locator(".notification-list").innerText(), /Update number 21/);
  assert.match(await page.locator(".pager").innerText(), /1 of 2/);
  await page.screenshot({ path: join(shots, "notifications-page-nojs.png"), fullPage: true });
  await Promise.all([page.waitForURL(/\/apps\/demo\/notifications$/), page.locator("button", { hasText: "Mark All as Read" }).click()]);
  assert.match(await page.locator(".notifications-page").innerText(), /No notifications yet/);
  await context.close();
});

test("enabling push with permission granted stores a subscription", async () => {
  const { context, page } = await signIn(env, "follower@demo.test");
  await context.grantPermissions(["notifications"], { origin: env.server.base });
  // Headless Chromium has no push service to register with (subscribe
  // rejects), so the browser's PushManager answers with a subscription
  // holding real P-256 and auth keys; everything else (permission, service
  // worker, VAPID key, the save call) is the real path.
  await context.addInitScript(() => {
    const KEY = "test:push-subscription";
    const fake = (key) => ({
      endpoint: "https://push.example.test/send/" + key.slice(0, 8),
      getKey: (name) => {
        const raw = atob(name === "auth" ? "AAECAwQFBgcICQoLDA0ODw==" : key);
        return Uint8Array.from(raw, (c) => c.charCodeAt(0)).buffer;
      },
      unsubscribe: async () => (localStorage.removeItem(KEY), true),
    });
    PushManager.prototype.subscribe = async function () {
      const pair = await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"]);
      const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
      const key = btoa(String.fromCharCode(...raw));
      localStorage.setItem(KEY, key);
      return fake(key);
    };
    PushManager.prototype.getSubscription = async function () {
      const key = localStorage.getItem(KEY);
      return key ? fake(key) : null;
    };
  });
  const errors = watchErrors(page);
  await page.goto(env.server.base + "/apps/demo/profile");
  await page.locator('.push-toggle[data-hydrated="true"]').waitFor();
  await page.locator('[data-push-status="off"]').waitFor();
  await page.locator("button", { hasText: "Enable push notifications" }).click();
  await page.locator('[data-push-status="on"], .push-toggle .field-error').first().waitFor();
  const failure = await page.locator(".push-toggle .field-error").count() ? await page.locator(".push-toggle .field-error").innerText() : "";
  assert.equal(failure, "", "enable push failed");
  const me = await page.evaluate(async () => (await (await fetch("/api/auth/me?appId=demo")).json()).data);
  assert.equal(me.devices.length, 1, "one subscription stored");
  await page.screenshot({ path: join(shots, "push-enabled.png") });
  // Reload: the status check 1 s after load finds it again.
  await page.reload();
  await page.locator('[data-push-status="on"]').waitFor();
  assert.deepEqual(errors, []);
  await context.close();
});

// The installable app is for members: a visitor's landing ships no
// JavaScript at all (issue 14), so these sign in first.
test("the iOS install banner shows the how-to and stays dismissed", async () => {
  const { context, page } = await signIn(env, "follower@demo.test", undefined, {
    userAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
  });
  await page.goto(env.server.base + "/apps/demo");
  const banner = page.locator(".install-banner");
  await banner.waitFor();
  assert.match(await banner.innerText(), /Add to Home Screen/);
  await page.screenshot({ path: join(shots, "install-banner.png") });
  await banner.locator('button[aria-label="Dismiss install banner"]').click();
  assert.equal(await banner.count(), 0);
  const at = Number(await page.evaluate(() => localStorage.getItem("marquee:install-dismissed")));
  assert.ok(Math.abs(Date.now() - at) < 60000, "dismissal time stored");
  await page.reload();
  await page.waitForTimeout(1500);
  assert.equal(await banner.count(), 0, "dismissed for 7 days");
  // Eight days later it comes back.
  await page.evaluate(() => localStorage.setItem("marquee:install-dismissed", String(Date.now() - 8 * 86400000)));
  await page.reload();
  await banner.waitFor();
  await context.close();
});

test("pull-to-refresh past 30 reloads the page; a short pull does not", async () => {
  const { context, page } = await signIn(env, "follower@demo.test", undefined, { hasTouch: true, isMobile: true });
  await page.goto(env.server.base + "/apps/demo");
  await page.waitForFunction(() => document.querySelector("marquee-island[data-island=AppChrome]") !== null);
  await page.waitForTimeout(1500); // idle hydration
  const cdp = await context.newCDPSession(page);
  const touch = async (type, y) => cdp.send("Input.dispatchTouchEvent", { type, touchPoints: type === "touchEnd" ? [] : [{ x: 200, y }] });
  await page.evaluate(() => (window.__marker = 1));
  // 80 px * 0.3 = 24: the hint shows but it does not refresh.
  await touch("touchStart", 200);
  await touch("touchMove", 240);
  await touch("touchMove", 280);
  await page.locator(".pull-indicator", { hasText: "Pull to refresh" }).waitFor();
  await touch("touchEnd");
  await page.waitForTimeout(500);
  assert.equal(await page.evaluate(() => window.__marker), 1, "a short pull keeps the page");
  // 200 px * 0.3 = 60 > 30: reload.
  await touch("touchStart", 200);
  await touch("touchMove", 300);
  await touch("touchMove", 400);
  await page.locator(".pull-indicator", { hasText: "Release to refresh" }).waitFor();
  await page.screenshot({ path: join(shots, "pull-to-refresh.png") });
  await Promise.all([page.waitForEvent("load"), touch("touchEnd")]);
  assert.equal(await page.evaluate(() => window.__marker), undefined, "the page reloaded");
  await context.close();
});

test("search finds posts and links them; chat is a coming-soon page", async () => {
  const { context, page } = await signIn(env, "follower@demo.test");
  await page.goto(env.server.base + "/apps/demo");
  await page.locator('.header-actions[data-hydrated="true"]').waitFor();
  await page.locator('a[aria-label="Search"]').click();
  await page.fill('.search-overlay input[name="q"]', "studio tour");
  const hit = page.locator(".search-results a", { hasText: "Studio tour this Friday" });
  await hit.waitFor();
  await page.screenshot({ path: join(shots, "search-overlay.png") });
  await Promise.all([page.waitForURL(/\/posts\//), hit.click()]);
  await page.goto(env.server.base + "/apps/demo/chat");
  assert.match(await page.locator("main").innerText(), /Chat is coming soon/);
  assert.equal(await page.locator(".app-header").count(), 1);
  await page.screenshot({ path: join(shots, "chat.png") });
  await context.close();
});
