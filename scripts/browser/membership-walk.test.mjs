// Issue 40's "Done when" walk, only through the pages: a new creator makes
// three tiers ($5 monthly, $12 monthly with a 7-day trial, $100 yearly),
// gates the app, posts for everyone, for members and for the $12 tier and
// above, and makes a 50%-off-first-month code. A new fan with $0 joins the
// $5 tier by card, reads the members' post and a teaser of the third,
// upgrades to $12 with the code and reads it, then downgrades and cancels
// (without JavaScript, on a desktop); a second fan joins by PayPal; a third
// is given a tier from the studio. The studio's analytics then show the
// exact recurring revenue and members by tier. The tests share one walk,
// in order, against the local fake Stripe and PayPal (their webhooks
// relayed to the server).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  startServer, startFakePayments, startRelay, launchBrowser, startMailpit, signIn, watchErrors, screenshotDir,
  signUpAndConfirm, createApp, fakeStripeJS,
} from "./helpers.mjs";

const env = { server: null, browser: null, mail: null, fake: null, relay: null };
const shots = process.env.SHOTS_DIR || screenshotDir;
mkdirSync(shots, { recursive: true });
const phone = { width: 390, height: 844 };
const desktop = { width: 1280, height: 900 };

before(async () => {
  env.mail = await startMailpit();
  env.relay = await startRelay();
  env.fake = await startFakePayments([
    "-client-id", "walk-client", "-client-secret", "walk-secret", "-webhook-id", "WH-WALK", "-webhook-url", env.relay.url + "/api/webhooks/paypal",
    "-stripe", "-stripe-webhook-secret", "whsec_walk", "-stripe-webhook-url", env.relay.url + "/api/webhooks/stripe",
  ]);
  env.server = await startServer({
    SMTP_URL: env.mail.smtpUrl,
    MAIL_FROM: "Marquee <mail@marquee.test>",
    STRIPE_SECRET_KEY: "sk_test_walk",
    STRIPE_PUBLISHABLE_KEY: "pk_test_walk",
    STRIPE_WEBHOOK_SECRET: "whsec_walk",
    STRIPE_API_BASE: env.fake.stripe,
    // Cards on the platform's own account (the new app has no Connect account).
    PAYOUTS_REQUIRED: "false",
    PAYPAL_CLIENT_ID: "walk-client",
    PAYPAL_CLIENT_SECRET: "walk-secret",
    PAYPAL_API_BASE: env.fake.paypal,
    PAYPAL_WEBHOOK_ID: "WH-WALK",
  });
  env.relay.target = env.server.base;
  env.browser = await launchBrowser();
});
after(async () => {
  await env.browser?.close();
  await env.server?.stop();
  env.fake?.stop();
  env.relay?.stop();
  env.mail?.stop();
});

const password = "a-long-password";
const app = "tier-walk";
const base = () => env.server.base + "/apps/" + app;
const shot = (page, step, width) => page.screenshot({ path: join(shots, `tierwalk-${step}-${width}.png`), fullPage: true });
const walk = { creator: null, fan: null };

async function withFakeStripe(context) {
  await context.route("https://js.stripe.com/**", (route) => route.fulfill({ contentType: "application/javascript", body: fakeStripeJS }));
  await context.route("https://api.stripe.com/**", async (route) => {
    const u = new URL(route.request().url());
    const res = await route.fetch({ url: env.fake.stripe + u.pathname + u.search });
    await route.fulfill({ response: res, headers: { ...res.headers(), "access-control-allow-origin": "*" } });
  });
}

// newContext is a browser context whose waits allow for a busy machine:
// the walk is long, and one slow page must not fail it.
async function newContext(options) {
  const context = await env.browser.newContext(options);
  context.setDefaultTimeout(90_000);
  context.setDefaultNavigationTimeout(90_000);
  return context;
}

// newFan signs a fan up from the app's own sign-up link and confirms the address.
async function newFan(email, username, viewport = phone) {
  const context = await newContext({ viewport });
  await withFakeStripe(context);
  const page = await context.newPage();
  await signUpAndConfirm(env, page, email, username, password, app);
  return { context, page, errors: watchErrors(page) };
}

async function createTier(page, name, monthly, yearly, trialDays) {
  await page.goto(base() + "/studio/plans");
  const form = page.locator("form.plan-form").last();
  await form.locator('input[name="name"]').fill(name);
  await form.locator('input[name="monthlyPrice"]').fill(monthly);
  await form.locator('input[name="yearlyPrice"]').fill(yearly);
  await form.locator('input[name="trialDays"]').fill(String(trialDays));
  await form.locator('select[name="state"]').selectOption("ON_SALE");
  await form.locator('textarea[name="benefits"]').fill(name + " posts\nA thank-you in the credits");
  await Promise.all([page.waitForURL(/\/studio\/plans\?notice=/), form.getByRole("button", { name: "Create tier" }).click()]);
}

async function post(page, text, access) {
  await page.goto(base() + "/create-post");
  await page.fill("#post-content", text);
  await page.locator('select[name="access"]').first().selectOption({ label: access });
  await Promise.all([page.waitForURL(new RegExp("/apps/" + app + "/community$")), page.getByRole("button", { name: "Share" }).click()]);
}

test("1. a new creator makes three tiers, gates the app, posts for each audience and makes a code (390 px, JavaScript on)", async () => {
  const context = await newContext({ viewport: phone });
  const page = await context.newPage();
  walk.creator = { context, page, errors: watchErrors(page) };
  await signUpAndConfirm(env, page, "tiers@walk.test", "tiermaker", password);
  await createApp(env, page, app, "Tier Walk");

  await createTier(page, "Bronze", "5", "", 0);
  await createTier(page, "Silver", "12", "", 7);
  await createTier(page, "Gold", "", "100", 0);
  const tiers = await page.locator(".plan-card").allInnerTexts();
  assert.equal(tiers.length, 3, tiers.join("\n---\n"));
  assert.match(tiers[0], /Bronze/);
  assert.match(tiers[1], /Silver/);
  assert.match(tiers[2], /Gold/);
  await shot(page, "1-tiers", 390);

  // Only members get past the landing page; PayPal is the creator's.
  await page.goto(base() + "/studio/features");
  await page.check('input[name="gating"][value="required"]');
  await Promise.all([page.waitForURL(/notice=saved/), page.getByRole("button", { name: "Save features" }).click()]);
  await page.goto(base() + "/studio/paypal");
  const paypal = page.locator('form[action$="/studio/paypal"]');
  await paypal.locator('input[name="email"]').fill("tiers@example.com");
  await paypal.locator('input[name="password"]').fill(password);
  await Promise.all([page.waitForURL(/\/studio\/paypal\?notice=/), paypal.locator('button[type="submit"]').click()]);

  // The code: half off the first month.
  await page.goto(base() + "/studio/offers");
  const offer = page.locator("form.offer-form");
  await offer.locator('input[name="code"]').fill("HALFWALK");
  await offer.locator('select[name="kind"]').selectOption("percent");
  await offer.locator('input[name="value"]').fill("50");
  await offer.locator('select[name="duration"]').selectOption("REPEATING");
  await offer.locator('input[name="durationMonths"]').fill("1");
  await Promise.all([page.waitForURL(/notice=offer-created/), offer.locator("button[type=submit]").click()]);

  await post(page, "Open letter: the tour dates are out, everyone welcome.", "Everyone");
  await post(page, "Members first: the B-side demo is up for you.", "Members (any tier)");
  await post(page, "Silver circle: the stems of the new single.", "Silver and above");

  await page.goto(base() + "/studio/launch");
  await Promise.all([page.waitForURL(/notice=published/), page.getByRole("button", { name: "Publish", exact: true }).click()]);
  assert.deepEqual(walk.creator.errors, []);
});

test("2. a new fan with $0 joins the $5 tier by card in the gated app and reads the members' post (390 px, JavaScript on)", async () => {
  const fan = await newFan("first@walk.test", "firstfan");
  walk.fan = fan;
  const { page } = fan;
  await page.goto(base() + "/membership");
  const bronze = page.locator('li[data-tier="Bronze"]');
  assert.match(await bronze.innerText(), /\$5\.00\s*\/ month/);
  assert.match(await page.locator('li[data-tier="Gold"]').innerText(), /\$100\.00\s*\/ year/);
  await shot(page, "2-membership", 390);
  await Promise.all([page.waitForURL(/\/checkout\/plan\//), bronze.getByRole("button", { name: /^Join Bronze for \$5\.00/ }).click()]);
  // $0 in the wallet, not following yet: follow and add funds, or the card or PayPal.
  assert.equal(await page.getByRole("button", { name: "Follow and add funds" }).count(), 1);
  await shot(page, "2-plan-checkout", 390);
  await Promise.all([page.waitForURL(/orderId=/), page.getByRole("button", { name: /Pay \$5\.00 by card or PayPal/ }).click()]);
  await shot(page, "2-payment-step", 390);
  await page.locator('.checkout-pay[data-hydrated="true"]').waitFor();
  await page.locator(".method", { hasText: "Card" }).click();
  await page.locator(".fake-payment-element").waitFor();
  await Promise.all([page.waitForURL(/\/orders\//), page.locator(".pay-button").click()]);
  assert.match(await page.locator(".status").innerText(), /Payment Confirmed/);

  await page.goto(base() + "/community");
  const feed = await page.locator("main").innerText();
  assert.match(feed, /Open letter/);
  assert.match(feed, /B-side demo/);
  assert.doesNotMatch(feed, /stems of the new single/);
  const locked = page.locator(".feed-card", { has: page.getByTestId("locked-badge") });
  assert.equal(await locked.count(), 1);
  assert.match(await locked.innerText(), /Silver/);
  await shot(page, "2-member-feed", 390);
  // Its page is the teaser: what it takes, and the way there.
  await Promise.all([page.waitForURL(/\/posts\//), locked.locator("a").first().click()]);
  assert.doesNotMatch(await page.locator("main").innerText(), /stems of the new single/);
  const unlock = page.getByRole("link", { name: "Join Silver to unlock" });
  assert.equal(await unlock.getAttribute("href"), "/apps/" + app + "/membership");
  assert.equal(await page.locator("form.comment-form").count(), 0, "no comment form where replying is refused");
  await shot(page, "2-teaser", 390);
  assert.deepEqual(fan.errors, []);
});

test("3. the fan upgrades to $12 with the code and reads the tier's post (390 px, JavaScript on)", async () => {
  const { page, errors } = walk.fan;
  await page.goto(base() + "/membership");
  await Promise.all([page.waitForURL(/\/membership\/change\//), page.getByRole("link", { name: "Upgrade to Silver" }).click()]);
  await page.locator("#tier-code").fill("halfwalk");
  await Promise.all([page.waitForURL(/code=halfwalk/), page.getByRole("button", { name: "Apply" }).click()]);
  const summary = await page.locator(".tier-change").innerText();
  assert.match(summary, /HALFWALK: 50% off the first month/);
  assert.match(summary, /then \$12\.00 \/ month/);
  await shot(page, "3-upgrade", 390);
  await Promise.all([page.waitForURL(/\/membership\?notice=upgrade$/), page.getByRole("button", { name: /Confirm upgrade/ }).click()]);
  assert.match(await page.locator(".membership-current").innerText(), /Your tier: Silver/);
  await page.goto(base() + "/community");
  assert.match(await page.locator("main").innerText(), /stems of the new single/);
  await shot(page, "3-silver-feed", 390);
  assert.deepEqual(errors, []);
});

test("4. the fan downgrades, then cancels (1280 px, JavaScript off)", async () => {
  const { context, page } = await signIn(env, "first@walk.test", password, { javaScriptEnabled: false, viewport: desktop });
  await page.goto(base() + "/membership");
  await Promise.all([page.waitForURL(/\/membership\/change\//), page.getByRole("link", { name: "Downgrade to Bronze" }).click()]);
  assert.match(await page.locator("main").innerText(), /nothing is charged now/);
  await Promise.all([page.waitForURL(/notice=downgrade$/), page.getByRole("button", { name: "Confirm downgrade" }).click()]);
  assert.match(await page.locator(".membership-next").innerText(), /Moves to Bronze on /);
  await Promise.all([page.waitForURL(/\/membership/), page.locator('li[data-tier="Silver"]').getByRole("button", { name: "Cancel" }).click()]);
  assert.match(await page.locator(".membership-current").innerText(), /ends /);
  assert.equal(await page.locator('li[data-tier="Silver"]').getByRole("button", { name: "Keep membership" }).count(), 1);
  await shot(page, "4-cancelled", 1280);
  await context.close();
});

test("5. a second fan joins the $5 tier by PayPal, agreeing to PayPal's subscription (390 px, JavaScript on)", async () => {
  const fan = await newFan("second@walk.test", "secondfan");
  const { page, errors } = fan;
  await page.goto(base() + "/membership");
  await Promise.all([page.waitForURL(/\/checkout\/plan\//), page.locator('li[data-tier="Bronze"]').getByRole("button", { name: /^Join Bronze for \$5\.00/ }).click()]);
  await Promise.all([page.waitForURL(/step=payment/), page.getByRole("button", { name: /Pay \$5\.00 by card or PayPal/ }).click()]);
  await page.locator('.checkout-pay[data-hydrated="true"]').waitFor();
  await page.locator(".method", { hasText: "PayPal" }).click();
  await Promise.all([page.waitForURL((u) => u.toString().startsWith(env.fake.paypal + "/webapps/billing/subscriptions")), page.locator(".pay-button").click()]);
  assert.match(await page.locator("body").innerText(), /5\.00 USD every month/);
  await shot(page, "5-paypal-agree", 390);
  await Promise.all([page.waitForURL(/\/payment-success/), page.getByRole("button", { name: "Agree & Subscribe" }).click()]);
  await page.getByRole("heading", { name: "Payment Successful!" }).waitFor();
  await page.goto(base() + "/membership");
  assert.match(await page.locator(".membership-current").innerText(), /Your tier: Bronze · renews /);
  assert.match(await page.locator(".membership-paypal").innerText(), /renews through PayPal/);
  await page.goto(base() + "/community");
  assert.match(await page.locator("main").innerText(), /B-side demo/);
  assert.deepEqual(errors, []);
  await fan.context.close();
});

test("6. a third fan follows and is given the top tier from the studio (1280 px, JavaScript off)", async () => {
  const third = await newFan("third@walk.test", "thirdfan", desktop);
  // The gated landing: members only, but following is free.
  await third.page.goto(base());
  await Promise.all([third.page.waitForURL(base()), third.page.getByRole("button", { name: "Follow for free" }).click()]);
  await third.page.getByRole("button", { name: "Unfollow" }).waitFor();
  await third.context.close();

  const { context, page } = await signIn(env, "tiers@walk.test", password, { javaScriptEnabled: false, viewport: desktop });
  await page.goto(base() + "/studio/members");
  const row = page.locator("tr", { hasText: "@thirdfan" });
  await row.locator("summary", { hasText: "Give a membership" }).click();
  await row.getByLabel("Tier to give @thirdfan").selectOption({ label: "Gold" });
  await row.getByLabel("How long for @thirdfan").selectOption("0");
  await Promise.all([page.waitForURL(/\/studio\/members/), row.getByRole("button", { name: "Give", exact: true }).click()]);
  assert.match(await page.locator("tr", { hasText: "@thirdfan" }).innerText(), /Gold \(gift, active\)/);
  await shot(page, "6-gift", 1280);
  await context.close();
});

test("7. the studio's analytics show the exact recurring revenue and members by tier (390 px, JavaScript on)", async () => {
  const { page, errors } = walk.creator;
  await page.goto(base() + "/studio/analytics");
  // Silver by card at half price while the code runs ($6.00; cancelled, so
  // until the period ends), Bronze by PayPal ($5.00), Gold given.
  assert.equal(await page.getByTestId("mrr").innerText(), "$11.00");
  const rows = (await page.locator("table.recurring-tiers tbody tr").allInnerTexts()).map((r) => r.split("\t").map((c) => c.trim()));
  assert.deepEqual(rows, [
    ["Bronze", "1", "0", "$5.00"],
    ["Silver", "1", "0", "$6.00"],
    ["Gold", "0", "1", "$0.00"],
  ]);
  await shot(page, "7-analytics", 390);
  assert.deepEqual(errors, []);
});
