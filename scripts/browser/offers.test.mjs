import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { useServerAndBrowser, signIn, watchErrors, screenshotDir, root } from "./helpers.mjs";

// Offers (issue 40 items 5 and 6): the creator makes a 50%-off-first-month
// code on the studio's Offers screen; a fan types it into "Have a code?" on
// the membership page, sees the discounted price and joins with it from
// the wallet; the studio then lists the redemption and who made it. On a
// phone (390 px) and a desktop (1280 px).
const env = useServerAndBrowser();
const shots = process.env.SHOTS_DIR || screenshotDir;
mkdirSync(shots, { recursive: true });

function cli(...args) {
  return execFileSync(join(root, "bin", "marquee"), args, { env: env.server.env, cwd: root, stdio: "pipe" }).toString();
}

for (const [width, height, fan, code] of [
  [390, 844, "follower", "HALF390"],
  [1280, 900, "member", "HALF1280"],
]) {
  test(`a 50%-off-first-month code, made in the studio and used on the membership page (${width} px)`, async () => {
    const viewport = { width, height };
    const creator = await signIn(env, "creator@demo.test", undefined, { viewport });
    const cerrors = watchErrors(creator.page);
    await creator.page.goto(env.server.base + "/apps/demo/studio/offers");
    const form = creator.page.locator("form.offer-form");
    await form.locator('input[name="code"]').fill(code);
    await form.locator('select[name="kind"]').selectOption("percent");
    await form.locator('input[name="value"]').fill("50");
    await form.locator('select[name="duration"]').selectOption("REPEATING");
    await form.locator('input[name="durationMonths"]').fill("1");
    await Promise.all([creator.page.waitForURL(/notice=offer-created/), form.locator("button[type=submit]").click()]);
    const card = creator.page.locator(`li[data-code="${code}"]`);
    assert.match(await card.innerText(), /50% off the first month/);
    assert.match(await card.innerText(), /Active · 0 redemptions/);
    await creator.page.screenshot({ path: join(shots, `offers-studio-${width}.png`), fullPage: true });

    cli("wallet", "credit", "demo", fan + "@demo.test", "20");
    const { page } = await signIn(env, fan + "@demo.test", undefined, { viewport });
    const errors = watchErrors(page);
    await page.goto(env.server.base + "/apps/demo/membership");
    await page.locator("#offer-code").fill(code.toLowerCase());
    await Promise.all([page.waitForURL(/code=/), page.getByRole("button", { name: "Apply" }).click()]);
    const tier = page.locator('li[data-tier="Studio Circle Membership"]');
    assert.match(await tier.innerText(), /\$8\.00\s*\$4\.00\s*\/ month/);
    assert.match(await page.locator(".offer-code .notice").innerText(), new RegExp(code + ": 50% off the first month"));
    await page.screenshot({ path: join(shots, `offers-membership-${width}.png`), fullPage: true });

    await Promise.all([page.waitForURL(/\/checkout\/plan\/.*code=/), tier.getByRole("button", { name: /^Join monthly/ }).click()]);
    assert.match(await page.locator(".plan-checkout .price").innerText(), /\$4\.00/);
    await page.screenshot({ path: join(shots, `offers-checkout-${width}.png`), fullPage: true });
    await Promise.all([page.waitForURL(/\/profile\?joined=1/), page.getByRole("button", { name: "Pay $4.00 with wallet" }).click()]);
    assert.match(await page.locator(".profile-membership").innerText(), /Studio Circle Membership/);
    await page.screenshot({ path: join(shots, `offers-joined-${width}.png`), fullPage: true });

    // The code is used: once per member.
    await page.goto(env.server.base + "/apps/demo/membership?code=" + code);
    assert.match(await page.locator(".offer-code").innerText(), /You have already used this code/);

    await creator.page.goto(env.server.base + "/apps/demo/studio/offers");
    assert.match(await card.innerText(), /Active · 1 redemption/);
    await card.locator("summary").click();
    assert.match(await card.innerText(), new RegExp("@" + fan + " · \\$4\\.00 off"));
    await creator.page.screenshot({ path: join(shots, `offers-redeemed-${width}.png`), fullPage: true });
    // Analytics count the redemption (one per run of this file's tests so far).
    await creator.page.goto(env.server.base + "/apps/demo/studio/analytics");
    const redeemed = Number(await creator.page.locator('[data-testid="offer-redemptions"]').innerText());
    assert.equal(redeemed, width === 390 ? 1 : 2);
    assert.match(await creator.page.locator("table.offer-redemptions").innerText(), new RegExp(code + "\\s+1\\s+\\$4\\.00"));
    await creator.page.locator("#trials-h").scrollIntoViewIfNeeded();
    await creator.page.screenshot({ path: join(shots, `offers-analytics-${width}.png`) });
    assert.deepEqual(errors, []);
    assert.deepEqual(cerrors, []);
    await page.context().close();
    await creator.context.close();
  });
}
