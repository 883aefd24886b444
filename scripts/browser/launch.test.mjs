import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { useServerAndBrowser, signIn, watchErrors, screenshotDir } from "./helpers.mjs";

// Launch (issue 43 item 1): a new creator makes an app, which starts
// unpublished (a visitor gets a 404, the creator a banner); follows the
// studio's checklist (profile, look, donations, PayPal, a first post, each
// ticked off as it is done); previews the app as a visitor and as a member
// and exits the preview; then publishes it, and a visitor sees it. On a
// phone (390 px) and a desktop (1280 px) with JavaScript, and the publish,
// preview and unpublish steps once without it.
const env = useServerAndBrowser();
const shots = process.env.SHOTS_DIR || screenshotDir;
mkdirSync(shots, { recursive: true });

async function createApp(page, name, display) {
  await page.goto(env.server.base + "/apps");
  await page.fill("#app-name", name);
  await page.fill("#app-display-name", display);
  await Promise.all([
    page.waitForURL(new RegExp("/apps/" + name + "/studio/launch\\?notice=created")),
    page.locator("button", { hasText: "Create app" }).click(),
  ]);
}

for (const [width, height] of [
  [390, 844],
  [1280, 900],
]) {
  test(`a new creator follows the launch checklist to Publish (${width} px)`, async () => {
    const viewport = { width, height };
    const name = "nova-" + width;
    const base = env.server.base + "/apps/" + name;
    const { context, page } = await signIn(env, "member@demo.test", undefined, { viewport });
    const errors = watchErrors(page);
    const shot = (p, step) => p.screenshot({ path: join(shots, `launch-${step}-${width}.png`), fullPage: true });

    await createApp(page, name, "Nova Launch");
    assert.match(await page.locator(".added-alert").innerText(), /only you and your staff can see it/);
    assert.match(await page.locator(".launch-progress").innerText(), /0 of 5 steps done/);
    assert.equal(await page.locator("li.launch-step").count(), 5);
    assert.equal(await page.locator("li.launch-step.done").count(), 0);
    await shot(page, "checklist-new");

    // Not published: a visitor finds nothing; the creator sees the banner.
    const visitor = await env.browser.newContext({ viewport });
    const vpage = await visitor.newPage();
    const missing = await vpage.goto(base);
    assert.equal(missing.status(), 404);
    assert.doesNotMatch(await vpage.locator("body").innerText(), /Nova Launch/);
    await shot(vpage, "visitor-404");
    await page.goto(base);
    assert.match(await page.locator(".launch-bar").innerText(), /This app is not published yet — only its staff can see it/);
    await shot(page, "banner");

    // The checklist's steps, each on its own screen.
    await page.goto(base + "/studio");
    await page.fill("#bio", "Night drives, warm synths and the stories behind them.");
    await Promise.all([page.waitForURL(/notice=saved/), page.getByRole("button", { name: "Save profile" }).click()]);
    await page.goto(base + "/studio/theme");
    await page.selectOption("#theme-font", "lora");
    await Promise.all([page.waitForURL(/\/studio\/theme\?notice=/), page.getByRole("button", { name: "Save theme" }).click()]);
    await page.goto(base + "/studio/features");
    await page.check('input[name="donations"]');
    await Promise.all([page.waitForURL(/notice=saved/), page.getByRole("button", { name: "Save features" }).click()]);
    await page.goto(base + "/studio/paypal");
    const paypal = page.locator('form[action$="/studio/paypal"]');
    await paypal.locator('input[name="email"]').fill("nova@example.com");
    await paypal.locator('input[name="password"]').fill("demo-password");
    await Promise.all([page.waitForURL(/\/studio\/paypal\?notice=/), paypal.locator('button[type="submit"]').click()]);
    await page.goto(base + "/create-post");
    await page.fill("#post-content", "Hello, first fans: the new single is out on Friday.");
    await Promise.all([page.waitForURL(new RegExp("/apps/" + name + "/community$")), page.getByRole("button", { name: "Share" }).click()]);

    await page.goto(base + "/studio/launch");
    assert.match(await page.locator(".launch-progress").innerText(), /4 of 5 steps done/);
    for (const step of ["profile", "earn", "payouts", "post"]) {
      assert.equal(await page.locator(`li.launch-step.done[data-step="${step}"]`).count(), 1, step + " is done");
    }
    assert.equal(await page.locator('li.launch-step.done[data-step="preview"]').count(), 0);
    await shot(page, "checklist-4");

    // Preview as a visitor: signed out, the bar says so; then as a member;
    // then back to the creator's own view.
    await Promise.all([page.waitForURL(base), page.getByRole("button", { name: "Preview as a visitor" }).click()]);
    assert.match(await page.locator(".launch-bar.previewing").innerText(), /Previewing as a visitor/);
    assert.match(await page.locator("main").innerText(), /Sign In/);
    assert.match(await page.locator("body").innerText(), /Night drives/);
    await shot(page, "preview-visitor");
    await Promise.all([page.waitForURL(base), page.getByRole("button", { name: "View as a member" }).click()]);
    assert.match(await page.locator(".launch-bar.previewing").innerText(), /Previewing as a member/);
    await shot(page, "preview-member");
    await Promise.all([page.waitForURL(base), page.getByRole("button", { name: "Exit preview" }).click()]);
    assert.equal(await page.locator(".launch-bar.previewing").count(), 0);
    assert.match(await page.locator(".launch-bar").innerText(), /not published yet/);

    // Publish.
    await page.goto(base + "/studio/launch");
    assert.match(await page.locator(".launch-progress").innerText(), /5 of 5 steps done/);
    await Promise.all([page.waitForURL(/notice=published/), page.getByRole("button", { name: "Publish", exact: true }).click()]);
    assert.match(await page.locator("#launch-h").innerText(), /Your app is published/);
    await shot(page, "published");
    const open = await vpage.goto(base);
    assert.equal(open.status(), 200);
    assert.match(await vpage.locator("body").innerText(), /Nova Launch/);
    assert.equal(await vpage.locator(".launch-bar").count(), 0);
    await shot(vpage, "visitor-published");

    assert.deepEqual(errors, []);
    await visitor.close();
    await context.close();
  });
}

test("without JavaScript: preview as a visitor, publish and unpublish from the checklist (390 px)", async () => {
  const viewport = { width: 390, height: 844 };
  const name = "quiet-nojs";
  const base = env.server.base + "/apps/" + name;
  const { context, page } = await signIn(env, "member@demo.test", undefined, { viewport, javaScriptEnabled: false });
  const shot = (p, step) => p.screenshot({ path: join(shots, `launch-nojs-${step}-390.png`), fullPage: true });
  await createApp(page, name, "Quiet Launch");

  await Promise.all([page.waitForURL(base), page.getByRole("button", { name: "Preview as a visitor" }).click()]);
  assert.match(await page.locator(".launch-bar.previewing").innerText(), /Previewing as a visitor/);
  await shot(page, "preview-visitor");
  await Promise.all([page.waitForURL(base), page.getByRole("button", { name: "Exit preview" }).click()]);
  assert.match(await page.locator(".launch-bar").innerText(), /not published yet/);

  await page.goto(base + "/studio/launch");
  await Promise.all([page.waitForURL(/notice=published/), page.getByRole("button", { name: "Publish", exact: true }).click()]);
  assert.match(await page.locator(".added-alert").innerText(), /Your app is published/);
  const visitor = await env.browser.newContext({ viewport, javaScriptEnabled: false });
  const vpage = await visitor.newPage();
  assert.equal((await vpage.goto(base)).status(), 200);

  await Promise.all([page.waitForURL(/notice=unpublished/), page.getByRole("button", { name: "Unpublish" }).click()]);
  assert.match(await page.locator(".added-alert").innerText(), /only its staff can open it/);
  await shot(page, "unpublished");
  assert.equal((await vpage.goto(base)).status(), 404);
  await visitor.close();
  await context.close();
});
