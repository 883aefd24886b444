import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { useServerAndBrowser, signIn, watchErrors, screenshotDir } from "./helpers.mjs";

const env = useServerAndBrowser();
mkdirSync(screenshotDir, { recursive: true });

async function createApp(page, name, display) {
  await page.goto(env.server.base + "/apps");
  await page.fill("#app-name", name);
  await page.fill("#app-display-name", display);
  await Promise.all([page.waitForURL(new RegExp("/apps/" + name + "/studio/launch\\?notice=created")), page.locator("button", { hasText: "Create app" }).click()]);
}

// Issue 43 item 3: the studio's danger zone, on a phone without JavaScript
// and on a desktop with it: the creator mails themselves an export, a
// wrong name is refused with what was typed, the right name deletes the
// app (its pages are gone), and an app with money pending says what and
// offers no Delete.
for (const [label, viewport, js] of [["390-nojs", { width: 390, height: 844 }, false], ["1280-js", { width: 1280, height: 900 }, true]]) {
  test(`studio danger zone at ${label}`, async () => {
    const creator = await signIn(env, "creator@demo.test", "demo-password", { viewport, javaScriptEnabled: js });
    const page = creator.page;
    const errors = watchErrors(page);
    const shot = (name) => page.screenshot({ path: join(screenshotDir, `danger-${name}-${label}.png`), fullPage: true });
    const name = "goner-" + (js ? "js" : "nojs");
    await createApp(page, name, "Goner");

    await page.goto(env.server.base + `/apps/${name}/studio`);
    await Promise.all([page.waitForURL(/\/studio\/data$/), page.locator(".studio-nav a", { hasText: "Export & delete" }).click()]);
    assert.match(await page.locator("#delete-h").innerText(), /Danger zone/);
    await Promise.all([page.waitForURL(/notice=export-requested/), page.getByRole("button", { name: "Mail me an export" }).click()]);
    assert.match(await page.locator(".added-alert").innerText(), /we mail you a link/);
    assert.match(await page.locator(".export-list").innerText(), /being prepared|ready/);
    const [sw, iw] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(sw <= iw, `the screen scrolls sideways: ${sw} > ${iw}`);

    await page.fill('input[name="confirm"]', "Goner");
    await Promise.all([page.waitForLoadState("load"), page.getByRole("button", { name: "Delete this app" }).click()]);
    assert.match(await page.locator(".danger-zone").innerText(), new RegExp(`Type ${name} exactly to confirm`));
    assert.equal(await page.inputValue('input[name="confirm"]'), "Goner");
    await shot("refused");
    await page.fill('input[name="confirm"]', name);
    await Promise.all([page.waitForURL(/\/apps\?deleted=/), page.getByRole("button", { name: "Delete this app" }).click()]);
    assert.match(await page.locator(".added-alert").innerText(), new RegExp(`${name} was deleted with everything in it`));
    assert.equal(await page.locator(".your-app", { hasText: "/apps/" + name }).count(), 0, "no longer among your apps");
    await shot("deleted");
    const gone = await page.goto(env.server.base + "/apps/" + name);
    assert.equal(gone.status(), 404);

    // The demo has orders on their way: it says so and offers no Delete.
    await page.goto(env.server.base + "/apps/demo/studio/data");
    const pending = page.locator('[data-testid="money-pending"]');
    if (await pending.count()) {
      assert.match(await pending.innerText(), /cannot be deleted while money is pending/);
      assert.equal(await page.getByRole("button", { name: "Delete this app" }).isDisabled(), true);
    }
    await shot("demo");
    assert.deepEqual(errors.filter((e) => !/^(400|404) /.test(e)), []);
  });
}
