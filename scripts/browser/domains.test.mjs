import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { useServerAndBrowser, signIn, watchErrors, screenshotDir, root } from "./helpers.mjs";

// A resolver that answers nothing: Check now fails at once, saying why.
const env = useServerAndBrowser({ DNS_RESOLVER: "127.0.0.1:9", DNS_TIMEOUT: "1s" });
mkdirSync(screenshotDir, { recursive: true });
const fans = "fans.example.test";

// Issue 42 item 3 in the browser: the creator adds fans.example.test in the
// studio and is shown the records to create (a failed check says why); the
// operator verifies it (`app domain add --verified`); a fan opens the app at
// the domain's root (Chromium maps the name to this machine), every link
// stays on the domain, signs in through the auth host and comes back signed
// in on the domain, then signs out; the main site's /apps/demo sends to the
// domain.
test("an app on its own domain: studio screen, serving, sign-in and sign-out", async () => {
  const creator = await signIn(env, "creator@demo.test");
  const cpage = creator.page;
  const cerrors = watchErrors(cpage);
  await cpage.goto(env.server.base + "/apps/demo/studio/domain");
  await cpage.fill('input[name="domain"]', "Fans.Example.Test");
  await Promise.all([cpage.waitForURL(/notice=domain-added/), cpage.getByRole("button", { name: "Add domain" }).click()]);
  const state = cpage.locator('[data-testid="domain-state"]');
  // Adding also queues the first check (a job that starts at once): the
  // page shows the domain waiting, or, when the job was quicker than the
  // redirect (a busy machine), its failed first check. Either way unverified.
  assert.match(await state.innerText(), /Waiting for DNS|Not verified yet\s+Last check: the DNS lookup of _marquee-verify\.fans\.example\.test failed/);
  assert.match(await state.innerText(), /_marquee-verify\.fans\.example\.test/);
  assert.match(await state.innerText(), /marquee-verify=[0-9a-f]{32}/);
  assert.match(await state.innerText(), /CNAME/);
  await Promise.all([cpage.waitForURL(/notice=domain-unverified/), cpage.getByRole("button", { name: "Check now" }).click()]);
  assert.match(await cpage.locator('[data-testid="domain-error"]').innerText(), /DNS lookup .* failed|timed out|no TXT record/);
  for (const [w, h] of [[390, 844], [1280, 900]]) {
    await cpage.setViewportSize({ width: w, height: h });
    const [sw, iw] = await cpage.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(sw <= iw, `the domain screen scrolls sideways at ${w} px: ${sw} > ${iw}`);
    await cpage.screenshot({ path: join(screenshotDir, `domains-studio-${w}x${h}.png`), fullPage: true });
  }
  // A URL is no domain name: refused beside the field.
  await cpage.fill('input[name="domain"]', "https://fans.example.test/x");
  await cpage.getByRole("button", { name: "Use this domain" }).click();
  assert.match(await cpage.locator(".field-error").innerText(), /Enter a domain name/);
  assert.deepEqual(cerrors.filter((e) => !e.startsWith("400 ")), []);

  // The operator vouches for it; a running server serves it within 5 s.
  execFileSync(join(root, "bin", "marquee"), ["app", "domain", "add", "demo", fans, "--verified"], { env: env.server.env, cwd: root, stdio: "pipe" });

  const port = new URL(env.server.base).port;
  const origin = `http://${fans}:${port}`;
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", `--host-resolver-rules=MAP ${fans} 127.0.0.1`],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    const errors = watchErrors(page);
    let served = false;
    for (let i = 0; i < 40 && !served; i++) {
      const res = await page.goto(origin + "/");
      served = res.status() === 200;
      if (!served) await page.waitForTimeout(250);
    }
    assert.ok(served, "the domain does not serve the app");
    errors.length = 0; // the 404s of the wait
    assert.equal(await page.locator('link[rel="canonical"]').getAttribute("href"), origin);
    // No link of the page goes to the main site (the creator's own links
    // in bio go where they go), nor keeps the /apps/demo prefix.
    const hrefs = await page.evaluate(() => [...document.querySelectorAll("a[href], form[action]")].map((a) => a.href || a.action));
    const auth = new URL(env.server.auth).origin;
    const main = new URL(env.server.base).origin;
    assert.ok(hrefs.length > 10, "few links: " + hrefs.join(" "));
    for (const h of hrefs) {
      const u = new URL(h);
      assert.notEqual(u.origin, main, `a link leaves the domain for the main site: ${h}`);
      assert.ok(!(u.origin === origin && u.pathname.startsWith("/apps/demo")), `a link keeps the /apps/demo prefix: ${h}`);
    }
    await page.screenshot({ path: join(screenshotDir, "domains-landing-390x844.png"), fullPage: true });
    await page.goto(origin + "/community");
    assert.equal(new URL(page.url()).pathname, "/community");

    // Sign in from the domain: through the auth host and back, signed in.
    await page.goto(origin + "/");
    await Promise.all([page.waitForURL((u) => u.toString().startsWith(auth + "/authenticate/signin")), page.getByRole("link", { name: "Sign In" }).first().click()]);
    await page.fill('[name="email"]', "follower@demo.test");
    await page.fill('[name="password"]', "demo-password");
    const chain = [];
    page.on("response", (r) => chain.push(r.status() + " " + r.url()));
    await page.locator('form button[type="submit"]').click();
    await page.waitForURL(origin + "/").catch((e) => assert.fail("sign-in did not come back: " + page.url() + "\n" + chain.join("\n")));
    const me = await page.evaluate(async () => (await fetch("/api/auth/me")).json());
    // Signed in on the auth host too (localhost's cookie), the same account.
    assert.equal((await context.request.get(env.server.base + "/api/auth/me")).status(), 200);
    assert.equal(me.data?.user?.username ?? me.user?.username, "follower", JSON.stringify(me));
    const cookies = await context.cookies(origin);
    assert.ok(cookies.some((c) => c.name === "marquee_session" && c.domain === fans), "no session cookie of the domain's own");

    // Sign out on the domain: both sessions end.
    await page.goto(origin + "/profile");
    // The islands (hydrated) link the domain's own paths too.
    await page.locator(".profile-actions").waitFor();
    const actions = await page.evaluate(() => [...document.querySelectorAll("a[href], form[action]")].map((a) => a.getAttribute("href") ?? a.getAttribute("action")));
    assert.ok(!actions.some((h) => h.startsWith("/apps/demo")), "a link keeps /apps/demo: " + actions.join(" "));
    await page.screenshot({ path: join(screenshotDir, "domains-profile-390x844.png"), fullPage: true });
    await Promise.all([page.waitForURL((u) => u.toString().startsWith(auth)), page.getByRole("button", { name: "Sign Out" }).click()]);
    // The browser's cookie of the main and auth hosts (localhost) is dead too.
    const meAfter = await context.request.get(env.server.base + "/api/auth/me");
    assert.equal(meAfter.status(), 401, "the auth host's session outlived the sign-out");
    await page.goto(origin + "/");
    assert.equal(await page.evaluate(async () => (await fetch("/api/auth/me")).status), 401);

    // The main site's /apps/demo is the domain now.
    await page.goto(env.server.base + "/apps/demo/community");
    assert.equal(page.url(), origin + "/community");
    assert.deepEqual(errors.filter((e) => !/ 401 .*\/api\/auth\/me/.test(e) && !e.startsWith("401 ")), []);
  } finally {
    await browser.close();
  }
});
