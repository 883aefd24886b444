// Moving between tiers in the browser (issue 40 item 4): a member paying
// from the wallet upgrades from the membership page (the confirmation says
// what it costs now and later) with JavaScript on, at phone size, and
// downgrades with JavaScript off at desktop size; the page then says when
// the lower tier starts and offers to keep the current one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { useServerAndBrowser, signIn, watchErrors, screenshotDir, root } from "./helpers.mjs";

const env = useServerAndBrowser();
const shots = process.env.SHOTS_DIR || screenshotDir;
mkdirSync(shots, { recursive: true });

test("a member upgrades, then downgrades without JavaScript", async () => {
  const fan = await signIn(env, "follower@demo.test", "demo-password", { viewport: { width: 390, height: 844 } });
  const errors = watchErrors(fan.page);
  const base = env.server.base + "/apps/demo";
  // Join the first tier, monthly, from the wallet.
  await fan.page.goto(base + "/membership");
  await Promise.all([
    fan.page.waitForURL(/\/checkout\/plan\//),
    fan.page.getByRole("button", { name: /^Join monthly Studio Circle Membership/ }).click(),
  ]);
  await Promise.all([fan.page.waitForURL(/\/profile/), fan.page.getByRole("button", { name: /Pay \$8\.00 with wallet/ }).click()]);

  // Upgrade: the confirmation names what is paid now and from the next period.
  await fan.page.goto(base + "/membership");
  assert.match(await fan.page.locator(".membership-current").innerText(), /Your tier: Studio Circle Membership/);
  await Promise.all([fan.page.waitForURL(/\/membership\/change\//), fan.page.getByRole("link", { name: "Upgrade to Backstage Pass" }).click()]);
  const summary = await fan.page.locator(".tier-change").innerText();
  assert.match(summary, /Pay now\s+\$7\.00/);
  assert.match(summary, /Then\s+\$15\.00 \/ month/);
  await fan.page.screenshot({ path: join(shots, "tier-change-upgrade-390x844.png"), fullPage: true });
  await Promise.all([fan.page.waitForURL(/\/membership\?notice=upgrade$/), fan.page.getByRole("button", { name: /Confirm upgrade/ }).click()]);
  assert.equal(await fan.page.getByRole("status").innerText(), "Your new tier is active.");
  assert.match(await fan.page.locator(".membership-current").innerText(), /Your tier: Backstage Pass/);
  assert.deepEqual(errors, []);
  await fan.context.close();

  // Downgrade with JavaScript off, on a desktop.
  const plain = await signIn(env, "follower@demo.test", "demo-password", { javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
  await plain.page.goto(base + "/membership");
  await Promise.all([
    plain.page.waitForURL(/\/membership\/change\//),
    plain.page.getByRole("link", { name: "Downgrade to Studio Circle Membership" }).click(),
  ]);
  assert.match(await plain.page.locator("main").innerText(), /nothing is charged now/);
  await plain.page.screenshot({ path: join(shots, "tier-change-downgrade-1280x900.png"), fullPage: true });
  await Promise.all([plain.page.waitForURL(/notice=downgrade$/), plain.page.getByRole("button", { name: "Confirm downgrade" }).click()]);
  const next = await plain.page.locator(".membership-next").innerText();
  assert.match(next, /Moves to Studio Circle Membership on /);
  assert.match(await plain.page.locator(".membership-current").innerText(), /Your tier: Backstage Pass/);
  await plain.page.screenshot({ path: join(shots, "tier-change-waiting-1280x900.png"), fullPage: true });
  // Keep the tier: the waiting downgrade is called off.
  await Promise.all([plain.page.waitForURL(/\/membership\/change\//), plain.page.getByRole("link", { name: "Keep Backstage Pass" }).click()]);
  await Promise.all([plain.page.waitForURL(/notice=keep$/), plain.page.getByRole("button", { name: "Keep Backstage Pass" }).click()]);
  assert.equal(await plain.page.locator(".membership-next").count(), 0);
  await plain.context.close();
});

// An upgrade with an offer code (issue 40 item 5, the Done-when's "upgrades
// to $12 with the code"): the creator makes a 50%-off-first-month code;
// a member paying from the wallet types it into the tier change page's
// "Have a code?" with JavaScript on (phone) and sees the price with it,
// then applies and confirms it with JavaScript off (desktop).
test("a member upgrades with a 50%-off code, JavaScript on and off", async () => {
  const base = env.server.base + "/apps/demo";
  const creator = await signIn(env, "creator@demo.test", undefined, { viewport: { width: 1280, height: 900 } });
  await creator.page.goto(base + "/studio/offers");
  const form = creator.page.locator("form.offer-form");
  await form.locator('input[name="code"]').fill("UPHALF");
  await form.locator('select[name="kind"]').selectOption("percent");
  await form.locator('input[name="value"]').fill("50");
  await form.locator('select[name="duration"]').selectOption("REPEATING");
  await form.locator('input[name="durationMonths"]').fill("1");
  await Promise.all([creator.page.waitForURL(/notice=offer-created/), form.locator("button[type=submit]").click()]);
  await creator.context.close();

  execFileSync(join(root, "bin", "marquee"), ["wallet", "credit", "demo", "member@demo.test", "20"], { env: env.server.env, cwd: root, stdio: "pipe" });
  const fan = await signIn(env, "member@demo.test", "demo-password", { viewport: { width: 390, height: 844 } });
  const errors = watchErrors(fan.page);
  await fan.page.goto(base + "/membership");
  await Promise.all([
    fan.page.waitForURL(/\/checkout\/plan\//),
    fan.page.getByRole("button", { name: /^Join monthly Studio Circle Membership/ }).click(),
  ]);
  await Promise.all([fan.page.waitForURL(/\/profile/), fan.page.getByRole("button", { name: /Pay \$8\.00 with wallet/ }).click()]);
  await fan.page.goto(base + "/membership");
  await Promise.all([fan.page.waitForURL(/\/membership\/change\//), fan.page.getByRole("link", { name: "Upgrade to Backstage Pass" }).click()]);
  await fan.page.locator("#tier-code").fill("uphalf");
  await Promise.all([fan.page.waitForURL(/code=uphalf/), fan.page.getByRole("button", { name: "Apply" }).click()]);
  const summary = await fan.page.locator(".tier-change").innerText();
  assert.match(summary, /Pay now\s+\$3\.50\s*\$7\.00/);
  assert.match(summary, /UPHALF: 50% off the first month/);
  assert.match(summary, /\$7\.50 \/ month while the code runs, then \$15\.00 \/ month/);
  await fan.page.screenshot({ path: join(shots, "tier-change-code-390x844.png"), fullPage: true });
  // A code that does not exist says so, and the quote stays without it.
  await fan.page.locator("#tier-code").fill("NOPE");
  await Promise.all([fan.page.waitForURL(/code=NOPE/), fan.page.getByRole("button", { name: "Apply" }).click()]);
  assert.match(await fan.page.locator(".offer-code").innerText(), /This code is not valid for this app/);
  assert.match(await fan.page.locator(".tier-change").innerText(), /Pay now\s+\$7\.00/);
  assert.deepEqual(errors.filter((e) => !/400/.test(e)), []);
  await fan.context.close();

  // Without JavaScript: type the code, apply, confirm.
  const plain = await signIn(env, "member@demo.test", "demo-password", { javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
  await plain.page.goto(base + "/membership");
  await Promise.all([plain.page.waitForURL(/\/membership\/change\//), plain.page.getByRole("link", { name: "Upgrade to Backstage Pass" }).click()]);
  await plain.page.locator("#tier-code").fill("UPHALF");
  await Promise.all([plain.page.waitForURL(/code=UPHALF/), plain.page.getByRole("button", { name: "Apply" }).click()]);
  assert.match(await plain.page.locator(".tier-change").innerText(), /Pay now\s+\$3\.50/);
  await plain.page.screenshot({ path: join(shots, "tier-change-code-1280x900.png"), fullPage: true });
  await Promise.all([plain.page.waitForURL(/notice=upgrade$/), plain.page.getByRole("button", { name: /Confirm upgrade · pay \$3\.50/ }).click()]);
  assert.match(await plain.page.locator(".membership-current").innerText(), /Your tier: Backstage Pass/);
  await plain.page.screenshot({ path: join(shots, "tier-change-code-done-1280x900.png"), fullPage: true });
  await plain.context.close();
});
