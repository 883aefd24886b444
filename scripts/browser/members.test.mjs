import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { startServer, launchBrowser, tempDir, root, signIn, watchErrors, screenshotDir } from "./helpers.mjs";

// The demo with its subscription gate required: the database is seeded and
// set before the server starts (seed-demo again changes nothing), so the
// server's in-process cache never holds the ungated settings.
const env = { server: null, browser: null };
before(async () => {
  const dir = tempDir("marquee-members-");
  const db = join(dir, "marquee.db");
  const cli = { ...process.env, DATABASE_URL: db, MEDIA_DIR: join(dir, "media"), REDIS_URL: "" };
  const bin = join(root, "bin", "marquee");
  execFileSync(bin, ["seed-demo"], { env: cli, cwd: root, stdio: "pipe" });
  execFileSync(bin, ["app", "set", "demo", "features.subscriptionGating.settings.required=true"], { env: cli, cwd: root, stdio: "pipe" });
  env.server = await startServer({ DATABASE_URL: db, MEDIA_DIR: join(dir, "media") });
  env.browser = await launchBrowser();
});
after(async () => {
  await env.browser?.close();
  await env.server?.stop();
});

test("a follower of a gated app sees the plans, subscribes with the wallet and reads gated posts", async () => {
  const { context, page } = await signIn(env, "follower@demo.test");
  const errors = watchErrors(page);
  // The gate sends the follower home, where the plans are.
  await page.goto(env.server.base + "/apps/demo/community");
  assert.equal(new URL(page.url()).pathname, "/apps/demo");
  const gate = page.locator(".landing-section.gate");
  await gate.waitFor();
  assert.match(await gate.innerText(), /Members only/);
  assert.match(await gate.innerText(), /Studio Circle Membership/);
  assert.match(await gate.innerText(), /\$8\.00 \/ month/);
  assert.equal(await page.locator(".footer, nav.footer").count(), 0, "the footer hides behind the gate");
  await page.screenshot({ path: join(screenshotDir, "members-gate-390x844.png"), fullPage: true });
  // The API holds too.
  const api = await page.evaluate(async () => (await fetch("/api/events/apps/demo/events")).status);
  assert.equal(api, 403);

  await Promise.all([page.waitForURL(/\/checkout\/plan\//), gate.locator("a.button", { hasText: "Subscribe" }).first().click()]);
  assert.match(await page.locator(".plan-checkout").innerText(), /Wallet balance: \$100\.00/);
  await page.screenshot({ path: join(screenshotDir, "members-plan-checkout-390x844.png"), fullPage: true });
  // Paying confirms the membership on the profile, then the feed opens.
  await Promise.all([page.waitForURL(/\/profile\?joined=1/), page.locator("button", { hasText: "Pay $8.00 with wallet" }).click()]);
  assert.match(await page.locator(".profile-membership .notice").innerText(), /Welcome! Your membership is active/);
  await page.goto(env.server.base + "/apps/demo/community");
  await page.locator(".feed-card").first().waitFor();
  assert.ok((await page.locator(".feed-card").count()) > 0, "gated posts are readable");
  await page.screenshot({ path: join(screenshotDir, "members-community-390x844.png") });
  const api2 = await page.evaluate(async () => (await fetch("/api/events/apps/demo/events")).status);
  assert.equal(api2, 200);

  // The profile shows the membership; cancel keeps access until the end.
  await page.goto(env.server.base + "/apps/demo/profile");
  const membership = page.locator(".profile-membership");
  assert.match(await membership.innerText(), /Studio Circle Membership/);
  assert.match(await membership.innerText(), /Renews on/);
  await Promise.all([page.waitForURL(/\/profile$/), membership.locator("button", { hasText: "Cancel membership" }).click()]);
  assert.match(await page.locator(".profile-membership").innerText(), /Cancelled: access until/);
  await page.screenshot({ path: join(screenshotDir, "members-profile-cancelled-390x844.png"), fullPage: true });
  await page.goto(env.server.base + "/apps/demo/community");
  assert.equal(new URL(page.url()).pathname, "/apps/demo/community", "access lasts until the period ends");
  assert.deepEqual(errors.filter((e) => !e.includes("/api/events/apps/demo/events")), []);
  await context.close();
});

test("a member donates from the modal and the creator sees it", async () => {
  const { context, page } = await signIn(env, "subscriber@demo.test");
  const errors = watchErrors(page);
  await page.goto(env.server.base + "/apps/demo/community");
  // Hydrated, the Donate link opens the modal instead of the page.
  await page.locator('.header-actions[data-hydrated="true"] a[aria-label="Donate"]').click();
  const scope = page.locator('[role="dialog"][aria-label="Show Your Support"]');
  await scope.waitFor();
  const send = scope.locator("button", { hasText: "Send" });
  assert.equal(await send.isDisabled(), true, "Send is disabled while the amount is empty");
  assert.match(await scope.innerText(), /Achievement Tiers/);
  assert.match(await scope.innerText(), /Bronze/);
  await scope.locator(".amounts a", { hasText: "$5" }).click();
  assert.equal(await scope.locator('input[aria-label="Custom amount"]').inputValue(), "5.00");
  await scope.locator('textarea[name="message"]').fill("Love the new EP");
  await page.screenshot({ path: join(screenshotDir, "members-donate-modal-390x844.png") });
  await send.click();
  await page.locator(".notice", { hasText: "Thank you for your support!" }).waitFor();
  await page.screenshot({ path: join(screenshotDir, "members-donate-thanks-390x844.png") });

  await page.goto(env.server.base + "/apps/demo/profile");
  assert.match(await page.locator(".profile-head").innerText(), /Bronze/, "the tier badge on the profile");
  assert.deepEqual(errors, []);
  await context.close();

  const creator = await signIn(env, "creator@demo.test");
  await creator.page.goto(env.server.base + "/apps/demo/donations");
  const list = creator.page.locator(".donations");
  assert.match(await list.innerText(), /\$5\.00/);
  assert.match(await list.innerText(), /@subscriber/);
  assert.match(await list.innerText(), /Love the new EP/);
  await creator.page.screenshot({ path: join(screenshotDir, "members-donations-390x844.png"), fullPage: true });
  await creator.context.close();
});
