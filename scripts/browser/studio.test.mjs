// The creator studio: a new user signs up, creates an app from /apps and
// sets it up (look, features, donation tiers, a monthly plan), with
// JavaScript on and off; a member subscribes and donates, and the creator
// sees it in the analytics. Screenshots on a phone and a desktop.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { root, useServerAndBrowser, watchErrors, screenshotDir, testImagePNG } from "./helpers.mjs";

// The new fan pays and donates at once: confirming an e-mail first is the
// accounts test's subject (scripts/browser/accounts.test.mjs).
const env = useServerAndBrowser({ REQUIRE_VERIFIED_EMAIL: "false" });
const shots = process.env.STUDIO_SHOTS || screenshotDir;
mkdirSync(shots, { recursive: true });

const phone = { width: 390, height: 844 };
const desktop = { width: 1280, height: 900 };

async function signUp(page, email, username) {
  await page.goto(env.server.auth + "/authenticate/signup");
  await page.fill("#field-email", email);
  await page.fill("#field-username", username);
  await page.fill("#field-password", "a-long-password");
  await Promise.all([page.waitForURL(env.server.base + "/apps"), page.locator("button[type=submit]").click()]);
}

// setUp runs the whole setup through the studio's plain forms; with or
// without JavaScript they post and come back with "Saved".
async function setUp(page, app, label) {
  const studio = env.server.base + "/apps/" + app + "/studio";
  await page.fill("#displayName", label + " Studio");
  await page.fill("#bio", "<p>Songs and <strong>sessions</strong>.</p><script>alert(1)</script>");
  // A bad language first: the form comes back with the reason and the input.
  await page.fill("#lang", "english");
  await Promise.all([page.waitForLoadState("load"), page.locator("button", { hasText: "Save profile" }).click()]);
  assert.match(await page.locator(".field-error").first().innerText(), /language code/);
  assert.equal(await page.inputValue("#displayName"), label + " Studio");
  await page.fill("#lang", "en");
  await page.fill("#footerOrder", "HOME, STORE, COMMUNITY, EVENTS, CHAT");
  await page.check('input[name="linksEnabled"]');
  await page.check('input[name="showLinkInBio"]');
  await Promise.all([page.waitForURL(/studio\?notice=saved/), page.locator("button", { hasText: "Save profile" }).click()]);
  await page.locator(".added-alert", { hasText: "Saved" }).waitFor();

  await page.locator('input[name="linkTitle"]').first().fill("Bandcamp");
  await page.locator('input[name="linkUrl"]').first().fill("https://bandcamp.com");
  await Promise.all([page.waitForURL(/studio\?notice=saved/), page.locator("button", { hasText: "Save links" }).click()]);

  await page.goto(studio + "/features");
  await page.check('input[name="donations"]');
  await page.fill("#suggestedAmounts", "5, 10, 25");
  const names = page.locator('input[name="tierName"]');
  const amounts = page.locator('input[name="tierAmount"]');
  const descs = page.locator('input[name="tierDescription"]');
  await names.nth(0).fill("Bronze");
  await amounts.nth(0).fill("10");
  await descs.nth(0).fill("A warm thank-you");
  await names.nth(1).fill("Gold");
  await amounts.nth(1).fill("100");
  await Promise.all([page.waitForURL(/features\?notice=saved/), page.locator("button", { hasText: "Save features" }).click()]);
  assert.equal(await page.inputValue('input[name="tierName"] >> nth=1'), "Gold");

  await page.goto(studio + "/plans");
  const newPlan = page.locator(".studio-card", { hasText: "New plan" });
  await newPlan.locator('input[name="name"]').fill("Supporters");
  await newPlan.locator('input[name="price"]').fill("5");
  // No cycle: refused, the plan cannot be published without one.
  await newPlan.locator('select[name="billingCycle"]').selectOption("");
  await Promise.all([page.waitForLoadState("load"), newPlan.locator("button", { hasText: "Create plan" }).click()]);
  assert.match(await page.locator(".field-error").first().innerText(), /billing cycle/);
  const again = page.locator(".studio-card", { hasText: "New plan" });
  await again.locator('select[name="billingCycle"]').selectOption("MONTHLY");
  await again.locator('textarea[name="benefits"]').fill("Early access\nMonthly live Q&A");
  await Promise.all([page.waitForURL(/plans\?notice=saved/), again.locator("button", { hasText: "Create plan" }).click()]);
  const card = page.locator('.plan-card[data-plan="Supporters"]');
  assert.match(await card.innerText(), /\$5\.00 \/ month/);
  assert.match(await card.innerText(), /Published/);
}

async function screenshots(page, app, tag) {
  const studio = env.server.base + "/apps/" + app + "/studio";
  for (const [name, path] of [["profile", ""], ["features", "/features"], ["plans", "/plans"], ["members", "/members"], ["analytics", "/analytics?bucket=day"]]) {
    for (const [vp, size] of [["390", phone], ["1280", desktop]]) {
      await page.setViewportSize(size);
      await page.goto(studio + path);
      await page.screenshot({ path: join(shots, `studio-${tag}-${name}-${vp}.png`), fullPage: true });
    }
  }
  await page.setViewportSize(phone);
}

test("a new user creates an app and sets it up with JavaScript", async () => {
  const context = await env.browser.newContext({ viewport: phone });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await signUp(page, "maker@studio.test", "maker");
  assert.match(await page.locator("h2#create-app").innerText(), /Create your app/);

  // The live check: taken, breaking the rules, then free.
  await page.waitForFunction(() => {
    const el = document.querySelector('marquee-island[data-island="AppNameCheck"] input');
    return el && Object.keys(el).some((k) => k.startsWith("__react"));
  });
  await page.locator("#app-name").pressSequentially("demo");
  await page.locator("#app-name-check", { hasText: "This app name is taken" }).waitFor();
  await page.locator("#app-name").fill("");
  await page.locator("#app-name").pressSequentially("-x");
  await page.locator("#app-name-check", { hasText: "lowercase letters" }).waitFor();
  await page.locator("#app-name").fill("");
  await page.locator("#app-name").pressSequentially("luna-live");
  await page.locator("#app-name-check", { hasText: "Available" }).waitFor();
  await page.screenshot({ path: join(shots, "studio-create-js-390.png"), fullPage: true });
  await page.fill("#app-display-name", "Luna Live");
  await Promise.all([page.waitForURL(/\/apps\/luna-live\/studio\?notice=created/), page.locator("button", { hasText: "Create app" }).click()]);
  assert.match(await page.locator(".added-alert").innerText(), /Your app is ready/);

  await setUp(page, "luna-live", "Luna");
  // With JavaScript the banner is uploaded through the media flow.
  await page.goto(env.server.base + "/apps/luna-live/studio");
  const png = await testImagePNG(page);
  // The island hydrates when it comes into view.
  await page.locator(".studio-image").nth(1).scrollIntoViewIfNeeded();
  const banner = page.locator('.studio-image[data-hydrated="true"]').nth(1);
  await banner.waitFor();
  await Promise.all([
    page.waitForURL(/studio\?notice=saved/),
    banner.locator('input[type="file"]').setInputFiles({ name: "banner.png", mimeType: "image/png", buffer: png }),
  ]);
  await page.locator("img.studio-image-preview.banner").waitFor();
  // The landing shows the look; the bio keeps its markup, not its script.
  await page.goto(env.server.base + "/apps/luna-live");
  assert.match(await page.locator("body").innerText(), /Luna Studio/);
  assert.equal(await page.locator(".bio strong").innerText(), "sessions");
  assert.equal(await page.locator(".bio script").count(), 0);
  assert.equal(await page.locator("img.banner").count(), 1, "the uploaded banner on the landing page");
  // The two refused forms answered 400 on purpose.
  assert.deepEqual(errors.filter((e) => !/favicon|link-icons|400 .*\/studio\/(profile|plans)$/.test(e)), []);
  await screenshots(page, "luna-live", "js");
  await context.close();
});

test("without JavaScript: create (a taken name is refused beside the field), set up, and see a member subscribe and donate", async () => {
  const context = await env.browser.newContext({ viewport: phone, javaScriptEnabled: false });
  const page = await context.newPage();
  await signUp(page, "nojs@studio.test", "nojsmaker");
  await page.fill("#app-name", "luna-live");
  await page.fill("#app-display-name", "Taken");
  await Promise.all([page.waitForLoadState("load"), page.locator("button", { hasText: "Create app" }).click()]);
  assert.match(await page.locator("#app-name-check").innerText(), /This app name is taken/);
  assert.equal(await page.inputValue("#app-display-name"), "Taken");
  await page.screenshot({ path: join(shots, "studio-create-nojs-refused-390.png"), fullPage: true });
  await page.fill("#app-name", "plain-app");
  await page.fill("#app-display-name", "Plain App");
  await Promise.all([page.waitForURL(/\/apps\/plain-app\/studio\?notice=created/), page.locator("button", { hasText: "Create app" }).click()]);
  await setUp(page, "plain-app", "Plain");

  // A member with wallet money subscribes and donates, all without JS.
  const member = await env.browser.newContext({ viewport: phone, javaScriptEnabled: false });
  const mp = await member.newPage();
  await mp.goto(env.server.auth + "/authenticate/signup?app=plain-app");
  await mp.fill("#field-email", "fan@studio.test");
  await mp.fill("#field-username", "plainfan");
  await mp.fill("#field-password", "a-long-password");
  await Promise.all([mp.waitForURL(env.server.base + "/apps/plain-app"), mp.locator("button[type=submit]").click()]);
  execFileSync(join(root, "bin", "marquee"), ["wallet", "credit", "plain-app", "fan@studio.test", "100"], { env: env.server.env, cwd: root, stdio: "pipe" });
  const planId = (await page.locator(".plan-card form.plan-form").first().getAttribute("action")).split("/").pop();
  await mp.goto(env.server.base + "/apps/plain-app/checkout/plan/" + planId);
  await Promise.all([mp.waitForLoadState("load"), mp.locator("button", { hasText: "Pay $5.00 with wallet" }).click()]);
  await mp.goto(env.server.base + "/apps/plain-app/donate");
  await mp.fill('input[name="amount"]', "12");
  await Promise.all([mp.waitForLoadState("load"), mp.locator(".donate-form button[type=submit]").click()]);
  await mp.locator(".notice", { hasText: "Thank you" }).waitFor();
  await member.close();

  // The creator sees the member, the plan and the money.
  await page.goto(env.server.base + "/apps/plain-app/studio/members");
  const row = page.locator('tr[data-member="plainfan"]');
  assert.match(await row.innerText(), /Subscriber/);
  assert.match(await row.innerText(), /Supporters \(active\)/);
  assert.match(await row.innerText(), /Bronze/);
  await page.goto(env.server.base + "/apps/plain-app/studio/analytics");
  const total = page.locator(".revenue-table tr.total");
  assert.match(await total.innerText(), /\$5\.00\s+\$12\.00\s+\$0\.00\s+\$0\.00\s+\$17\.00/);
  assert.equal(await page.locator(".chart svg").count() >= 2, true);
  // The CSV export of donations has the donation.
  const csv = await (await context.request.get(env.server.base + "/apps/plain-app/studio/export/donations.csv")).text();
  assert.match(csv, /plainfan,fan@studio\.test,12\.00,USD,PAID/);
  await screenshots(page, "plain-app", "nojs");
  await context.close();
});
