import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { useServerAndBrowser, signIn, watchErrors, screenshotDir, root } from "./helpers.mjs";

const env = useServerAndBrowser();
const fans = "fans.example.test";

// A browser subscription's keys as a push service would hand them out: a
// P-256 public key (uncompressed point) and a 16-byte secret, base64url.
function pushKeys() {
  const { publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const jwk = publicKey.export({ format: "jwk" });
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x, "base64url"), Buffer.from(jwk.y, "base64url")]);
  return { p256dh: point.toString("base64url"), auth: randomBytes(16).toString("base64url") };
}

// Headless Chromium has no push service to subscribe with: PushManager's
// subscribe answers a subscription of the page's origin (its endpoint says
// which, so the test can find it in the database) with real keys. The
// service worker, its registration and scope, the permission prompt and
// the island's calls are the browser's own.
function stubPushService(keys) {
  const toBuffer = (s) => {
    const raw = atob(s.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (s.length % 4)) % 4));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0)).buffer;
  };
  const subs = new WeakMap();
  PushManager.prototype.getSubscription = async function () {
    return subs.get(this) ?? null;
  };
  PushManager.prototype.subscribe = async function () {
    const endpoint = "https://push.example/" + location.host + "/" + Math.random().toString(36).slice(2);
    const sub = {
      endpoint,
      getKey: (name) => toBuffer(name === "p256dh" ? keys.p256dh : keys.auth),
      unsubscribe: async () => subs.delete(this),
    };
    subs.set(this, sub);
    return sub;
  };
}

// enablePush turns push on in the profile's island and answers what
// enable-push answered.
async function enablePush(page) {
  const toggle = page.locator(".push-toggle");
  await toggle.scrollIntoViewIfNeeded();
  await page.locator('.push-toggle[data-hydrated="true"] [data-push-status="off"]').waitFor();
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.url().includes("/api/notifications/enable-push/") && r.request().method() === "POST"),
    toggle.getByRole("button", { name: "Enable push notifications" }).click(),
  ]);
  assert.equal(res.status(), 201, await res.text());
  await page.locator('[data-push-status="on"]').waitFor();
  return (await res.json()).data;
}

// workerScope is the scope of the registration navigator.serviceWorker.ready
// gives the page (the one that controls its URL), and the script of the
// worker that controls the page after a reload.
async function workerOf(page) {
  const scope = await page.evaluate(async () => (await navigator.serviceWorker.ready).scope);
  await page.reload();
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  const script = await page.evaluate(() => navigator.serviceWorker.controller.scriptURL);
  return { scope, script };
}

// Issue 42 item 5 in the browser: the app's service worker is its own on
// each origin (/apps/demo/sw.js of scope /apps/demo/ on the main site, /sw.js
// of scope / on fans.example.test), the main site's never covers another
// app's pages, and enabling push records the origin it was made on. The
// domain is plain http on the test's port: Chromium is told to treat it as
// secure (service workers need a secure context; localhost is one).
test("the app's service worker and push subscription per origin", async () => {
  const port = new URL(env.server.base).port;
  const main = new URL(env.server.base).origin;
  const origin = `http://${fans}:${port}`;
  const keys = pushKeys();
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      `--host-resolver-rules=MAP ${fans} 127.0.0.1`,
      `--unsafely-treat-insecure-origin-as-secure=${origin}`,
    ],
  });
  try {
    const { context, page } = await signIn({ ...env, browser }, "follower@demo.test");
    await context.grantPermissions(["notifications"], { origin: main });
    await context.grantPermissions(["notifications"], { origin });
    await context.addInitScript(stubPushService, keys);
    const errors = watchErrors(page);

    // The main site: the app's own worker, scoped to the app.
    await page.goto(env.server.base + "/apps/demo/profile");
    const onMain = await workerOf(page);
    assert.equal(onMain.scope, main + "/apps/demo/");
    assert.equal(onMain.script, main + "/apps/demo/sw.js");
    // It cannot be made to cover more (the script's folder and
    // Service-Worker-Allowed both stop at the app).
    const wider = await page.evaluate(() =>
      navigator.serviceWorker.register("/apps/demo/sw.js", { scope: "/apps/" }).then(
        () => "registered",
        (e) => e.name,
      ),
    );
    assert.equal(wider, "SecurityError", "demo's worker was registered for all of /apps/");
    const mainPush = await enablePush(page);
    assert.equal(mainPush.origin, main, JSON.stringify(mainPush));
    await page.screenshot({ path: join(screenshotDir, "sw-main-profile-390x844.png"), fullPage: true });
    // Another app's pages (demo2 shares demo's prefix) are not demo's.
    await page.goto(env.server.base + "/apps/demo2/");
    assert.equal(await page.evaluate(() => navigator.serviceWorker.controller), null, "demo's worker controls /apps/demo2/");
    assert.equal(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration()) ?? null), null);

    // The operator verifies the domain; the server serves it within 5 s.
    execFileSync(join(root, "bin", "marquee"), ["app", "domain", "add", "demo", fans, "--verified"], { env: env.server.env, cwd: root, stdio: "pipe" });
    let served = false;
    for (let i = 0; i < 40 && !served; i++) {
      served = (await page.goto(origin + "/")).status() === 200;
      if (!served) await page.waitForTimeout(250);
    }
    assert.ok(served, "the domain does not serve the app");
    // Signed in on the auth host already: the domain's sign-in comes back
    // at once with its own session.
    await page.goto(origin + "/authenticate/signin");
    await page.waitForURL((u) => u.origin === origin && !u.pathname.startsWith("/auth"));
    errors.length = 0; // the 404s of the wait

    // The domain: its own worker at its root, scope "/".
    await page.goto(origin + "/profile");
    assert.equal(new URL(page.url()).pathname, "/profile", "not signed in on the domain: " + page.url());
    const onDomain = await workerOf(page);
    assert.equal(onDomain.scope, origin + "/");
    assert.equal(onDomain.script, origin + "/sw.js");
    const domainPush = await enablePush(page);
    assert.equal(domainPush.origin, origin, JSON.stringify(domainPush));
    await page.screenshot({ path: join(screenshotDir, "sw-domain-profile-390x844.png"), fullPage: true });

    // Two subscriptions of one member, one per origin, as the database has them.
    const rows = execFileSync("sqlite3", ["-separator", " ", env.server.env.DATABASE_URL, "SELECT origin, endpoint FROM push_subscriptions ORDER BY origin"], {
      encoding: "utf8",
    })
      .trim()
      .split("\n");
    assert.deepEqual(rows, [`${main} ${mainPush.endpoint}`, `${origin} ${domainPush.endpoint}`].sort());
    assert.ok(mainPush.endpoint.includes("/localhost:"), mainPush.endpoint);
    assert.ok(domainPush.endpoint.includes("/" + fans + ":"), domainPush.endpoint);

    // The main site still serves demo's worker (no 301: the browser keeps
    // updating it), and its registration is still there.
    const res = await fetch(env.server.base + "/apps/demo/sw.js", { redirect: "manual" });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("service-worker-allowed"), "/apps/demo/");
    await page.goto(env.server.base + "/apps");
    const mainScopes = await page.evaluate(async () => (await navigator.serviceWorker.getRegistrations()).map((r) => r.scope));
    assert.deepEqual(mainScopes, [main + "/apps/demo/"]);
    assert.deepEqual(errors.filter((e) => !e.includes("/apps/demo2/")), []);
    await context.close();
  } finally {
    await browser.close();
  }
});
