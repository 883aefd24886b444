// Accounts across both hosts: sign up on the auth site, land back signed in,
// follow the app, sign out; and the 401 handling of the header island.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { useServerAndBrowser, watchErrors, screenshotDir } from "./helpers.mjs";

const env = useServerAndBrowser();


test("a visitor signs up on the auth host, follows the app and signs out", async () => {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const errors = watchErrors(page);

  await page.goto(env.server.base + "/apps/demo");
  await page.locator("a", { hasText: "Sign Up" }).first().click();
  await page.waitForURL(env.server.auth + "/authenticate/signup?app=demo");
  assert.match(await page.locator("h1").innerText(), /Create your account/);

  // A first try with a short password keeps the typed values and says why.
  await page.fill("#field-email", "fan@demo.test");
  await page.fill("#field-username", "superfan");
  await page.fill("#field-password", "short");
  await page.locator("button[type=submit]").click();
  await page.locator(".field-error").first().waitFor();
  assert.equal(await page.inputValue("#field-email"), "fan@demo.test");
  assert.equal(await page.inputValue("#field-password"), "");
  assert.match(await page.locator("#field-password-error").innerText(), /at least 8/);

  await page.fill("#field-email", "");
  await page.fill("#field-email", "fan@demo.test");
  await page.fill("#field-password", "");
  await page.screenshot({ path: join(screenshotDir, "signup-390x844.png") });
  await page.fill("#field-password", "a-long-password");
  // The sign-up says a confirmation mail went to the address, and goes on.
  await Promise.all([page.waitForURL(/\/authenticate\/welcome/), page.locator("button[type=submit]").click()]);
  assert.match(await page.locator("main").innerText(), /Check your inbox[^]*fan@demo\.test[^]*spam/);
  await Promise.all([page.waitForURL(env.server.base + "/apps/demo"), page.getByRole("link", { name: /^Continue to / }).click()]);

  // Signed in on the main site: no Sign In button, header actions shown.
  assert.equal(await page.locator(".auth-buttons a", { hasText: "Sign In" }).count(), 0);
  await page.locator('a[aria-label="Search"]').waitFor();

  // Follow on the profile page.
  await page.goto(env.server.base + "/apps/demo/profile");
  assert.match(await page.locator(".profile-head h1").innerText(), /@superfan/);
  assert.match(await page.locator(".profile-head").innerText(), /fan@demo\.test/);
  const follow = page.locator(".profile-actions button", { hasText: "Follow" });
  await follow.waitFor();
  // Wait for hydration: the island's button only works once React owns it.
  await page.waitForFunction(() => {
    const el = document.querySelector('marquee-island[data-island="ProfileActions"] button');
    return el && Object.keys(el).some((k) => k.startsWith("__react"));
  });
  await follow.click();
  await page.locator(".profile-actions button", { hasText: "Unfollow" }).waitFor();
  assert.match(await page.locator(".profile-actions .meta").innerText(), /Role in this app: Follower/);
  await page.screenshot({ path: join(screenshotDir, "profile-390x844.png") });

  // The store is open to a follower (the store page itself is a later issue).
  const me = await page.evaluate(async () => (await fetch("/api/auth/me?appId=demo")).json());
  assert.equal(me.success, true);
  assert.equal(me.data.userAppRole, "FOLLOWER");
  assert.equal(me.data.userPermissions.canAccessStore, true);

  // Sign out: back to the auth site's sign-in for this app, session gone.
  await Promise.all([
    page.waitForURL(env.server.auth + "/authenticate/signin?app=demo"),
    page.locator(".profile-actions button", { hasText: "Sign Out" }).click(),
  ]);
  const after = await page.request.get(env.server.base + "/api/auth/me");
  assert.equal(after.status(), 401);
  await page.goto(env.server.base + "/apps/demo");
  assert.equal(await page.locator(".auth-buttons a", { hasText: "Sign In" }).count(), 1);

  // The one expected failure is the short-password sign-up (400).
  assert.deepEqual(errors.filter((e) => !e.includes("favicon") && !/^400 .*\/authenticate\/signup/.test(e)), []);
  await context.close();
});

test("a 401 from the API on a sub-path returns to the landing page", async () => {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await page.goto(env.server.auth + "/authenticate/signin?app=demo");
  await page.fill("#field-email", "follower@demo.test");
  await page.fill("#field-password", "demo-password");
  await Promise.all([page.waitForURL(env.server.base + "/apps/demo"), page.locator("button[type=submit]").click()]);
  await page.goto(env.server.base + "/apps/demo/community");
  await page.locator(".feed-card a").first().click();
  await page.waitForURL(/\/apps\/demo\/posts\//);
  await page.locator('.like[data-hydrated="true"]').first().waitFor();
  // The session dies while the page is open (signed out in another tab):
  // the server forgets it, and the next call answers 401.
  const cookies = await context.cookies();
  const session = cookies.find((c) => c.name === "marquee_session");
  await fetch(env.server.base + "/api/auth/logout", { method: "POST", headers: { Cookie: "marquee_session=" + session.value } });
  // The next API call answers 401, whichever comes first: the like below,
  // or a call an island already had scheduled (then the page has left
  // before the click, which is the same behaviour).
  await page.locator(".like-button").first().click({ timeout: 5000 }).catch(() => {});
  await page.waitForURL(env.server.base + "/apps/demo");
  // Back on the landing page the viewer is a visitor: sign-in buttons show.
  await page.locator("a", { hasText: "Sign In" }).first().waitFor();
  await context.close();
});
