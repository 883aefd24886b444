// Add funds by card without JavaScript (issue 24): on a phone with
// JavaScript off, the "Add funds" form sends the member to Stripe Checkout
// (the fake's hosted page, scripts/fakepaypal -stripe), which takes the card
// and sends them back to the wallet with the money, once. Screenshots go to
// /tmp/shots-topup/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startServer, startFakePayments, launchBrowser, signIn } from "./helpers.mjs";

const shots = "/tmp/shots-topup";
mkdirSync(shots, { recursive: true });
const shot = (page, name) => page.screenshot({ path: join(shots, "topup-card-" + name + ".png"), fullPage: true });
const env = { server: null, fake: null, browser: null };

before(async () => {
  env.fake = await startFakePayments(["-stripe", "-stripe-webhook-secret", "whsec_topup_card"]);
  env.server = await startServer({
    REQUIRE_VERIFIED_EMAIL: "false",
    STRIPE_SECRET_KEY: "sk_test_topup_card",
    STRIPE_PUBLISHABLE_KEY: "pk_test_topup_card",
    STRIPE_WEBHOOK_SECRET: "whsec_topup_card",
    STRIPE_API_BASE: env.fake.stripe,
  });
  env.browser = await launchBrowser();
});

after(async () => {
  await env.browser?.close();
  await env.server?.stop();
  env.fake?.stop();
});

test("Add funds by card with JavaScript off on a phone: Stripe Checkout, back to the wallet with the money once", async () => {
  const { context, page } = await signIn(env, "subscriber@demo.test", "demo-password", { javaScriptEnabled: false });
  await page.goto(env.server.base + "/apps/demo/transactions");
  const before = await page.locator(".wallet-balance").innerText();
  assert.match(before, /\$100\.00/);
  await page.locator('.add-funds-form input[name="amount"][value="2500"]').check();
  await page.locator('.add-funds-form input[name="method"][value="stripe"]').check();
  await shot(page, "1-form-390-nojs");
  await Promise.all([page.waitForURL((u) => u.toString().startsWith(env.fake.stripe + "/checkout/pay/cs_")), page.locator(".add-funds-button").click()]);
  assert.match(await page.locator("h1").innerText(), /25\.00 USD/);
  await shot(page, "2-checkout-390-nojs");
  await Promise.all([page.waitForURL(/\/transactions\?added=2500/), page.locator("#fake-checkout-pay").click()]);
  assert.match(await page.locator(".wallet-balance").innerText(), /\$125\.00/);
  assert.match(await page.locator(".notice").first().innerText(), /\$25\.00 added to your wallet/);
  assert.match(await page.locator(".movements").innerText(), /Added funds \(stripe\)/);
  await shot(page, "3-added-390-nojs");
  // The return address again (a reload) adds nothing more.
  await page.goto(page.url());
  await page.goto(env.server.base + "/apps/demo/transactions");
  assert.match(await page.locator(".wallet-balance").innerText(), /\$125\.00/);
  await context.close();
});
