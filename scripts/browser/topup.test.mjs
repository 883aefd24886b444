// Money in for members (issue 24): a new member of the demo app finds its
// welcome credit and buys with it; an order the wallet cannot cover offers
// "Add funds" at Review Cart (JavaScript on and off, phone); and Add funds
// by PayPal against the local fake, without JavaScript (form, approval,
// return) and with it (the island). Screenshots go to /tmp/shots-topup/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startServer, startFakePayments, launchBrowser, signIn, watchErrors } from "./helpers.mjs";

const shots = "/tmp/shots-topup";
mkdirSync(shots, { recursive: true });
const shot = (page, name) => page.screenshot({ path: join(shots, "topup-" + name + ".png"), fullPage: true });
// Two servers: one where the wallet is the only method (Review Cart's Add
// funds), one with PayPal (the top-up itself).
const walletOnly = { server: null };
const withPayPal = { server: null, fake: null };
let browser;

before(async () => {
  const fake = await startFakePayments(["-client-id", "topup-client", "-client-secret", "topup-secret", "-webhook-id", "WH-TOPUP"]);
  withPayPal.fake = fake;
  walletOnly.server = await startServer({ REQUIRE_VERIFIED_EMAIL: "false" });
  withPayPal.server = await startServer({
    REQUIRE_VERIFIED_EMAIL: "false",
    PAYPAL_CLIENT_ID: "topup-client",
    PAYPAL_CLIENT_SECRET: "topup-secret",
    PAYPAL_API_BASE: fake.paypal,
    PAYPAL_WEBHOOK_ID: "WH-TOPUP",
  });
  browser = await launchBrowser();
  walletOnly.browser = browser;
  withPayPal.browser = browser;
});

after(async () => {
  await browser?.close();
  await walletOnly.server?.stop();
  await withPayPal.server?.stop();
  withPayPal.fake?.stop();
});

async function landing(page, env) {
  const l = await (await page.request.get(env.server.base + "/api/app/demo/landing")).json();
  return { appId: l.data.id, storeId: l.data.store.id };
}

async function addToCart(page, env, storeId, search) {
  const items = await (await page.request.get(env.server.base + "/api/store/" + storeId + "/items?search=" + search)).json();
  const it = items.data.items[0];
  assert.ok(it, "an item for " + search);
  const r = await page.request.post(env.server.base + "/api/store/" + storeId + "/cart/items", { data: { storeItemId: it.id, quantity: 1 } });
  assert.equal(r.status(), 200);
  return it;
}

test("a new demo member finds the welcome credit, buys with it, and an order it cannot cover shows Add funds at Review Cart (phone, JS on)", async () => {
  const env = walletOnly;
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.auth + "/authenticate/signup?app=demo");
  await page.fill('[name="email"]', "newmember@demo.test");
  await page.fill('[name="username"]', "newmember");
  await page.fill('[name="password"]', "newmember-password");
  await Promise.all([page.waitForURL(/\/authenticate\/welcome/), page.locator('form button[type="submit"]').click()]);
  await Promise.all([page.waitForURL((u) => u.toString().startsWith(env.server.base)), page.getByRole("link", { name: /^Continue/ }).click()]);
  const { appId, storeId } = await landing(page, env);
  assert.equal((await page.request.post(env.server.base + "/api/notifications/follow/" + appId)).status(), 200);

  await page.goto(env.server.base + "/apps/demo/transactions");
  assert.match(await page.locator(".wallet-balance").innerText(), /\$50\.00/);
  assert.match(await page.locator(".movements").innerText(), /Welcome credit/);
  await shot(page, "1-welcome-390");

  // The welcome credit buys the $9.99 digital album through the checkout.
  await addToCart(page, env, storeId, "album");
  await page.goto(env.server.base + "/apps/demo/checkout");
  assert.equal(await page.locator(".wallet-short").count(), 0, "the wallet covers it");
  await Promise.all([page.waitForURL(/orderId=/), page.getByRole("button", { name: /Continue to/ }).click()]);
  await page.locator('.checkout-pay[data-hydrated="true"]').waitFor();
  await Promise.all([page.waitForURL(/payment-success/), page.locator(".pay-button").click()]);
  await page.getByRole("heading", { name: "Payment Successful!" }).waitFor();

  // $150 is more than is left: Review Cart says so and offers Add funds.
  await addToCart(page, env, storeId, "portrait");
  await page.goto(env.server.base + "/apps/demo/checkout");
  const short = await page.locator(".wallet-short").innerText();
  assert.match(short, /less than this order's \$150\.00/);
  assert.equal(await page.getByRole("button", { name: /Continue to/ }).count(), 0, "no way on that would fail");
  const box = await page.locator("a.add-funds-link").boundingBox();
  assert.ok(box && box.x >= 0 && box.x + box.width <= 390, "Add funds fits the phone screen");
  await shot(page, "2-review-add-funds-390-js");
  await Promise.all([page.waitForURL(/\/transactions\?return=checkout/), page.locator("a.add-funds-link").click()]);
  await page.locator("#add-funds").waitFor();
  await page.getByRole("link", { name: "Back to Checkout" }).waitFor();
  assert.deepEqual(errors, []);
  await context.close();
});

test("without JavaScript, Review Cart also offers Add funds when the wallet cannot cover the order (phone)", async () => {
  const env = walletOnly;
  const { context, page } = await signIn(env, "subscriber@demo.test", "demo-password", { javaScriptEnabled: false });
  const { storeId } = await landing(page, env);
  await addToCart(page, env, storeId, "portrait");
  await page.goto(env.server.base + "/apps/demo/checkout");
  assert.match(await page.locator(".wallet-short").innerText(), /Your wallet holds \$100\.00, less than this order's \$150\.00/);
  assert.equal(await page.getByRole("button", { name: /Continue to/ }).count(), 0);
  await shot(page, "3-review-add-funds-390-nojs");
  await Promise.all([page.waitForURL(/\/transactions\?return=checkout/), page.locator("a.add-funds-link").click()]);
  // No card or PayPal on this server: the form says so.
  assert.match(await page.locator(".add-funds").innerText(), /not available/);
  await context.close();
});

test("Add funds by PayPal without JavaScript: the form, PayPal's approval, back to the wallet with the money", async () => {
  const env = withPayPal;
  const { context, page } = await signIn(env, "subscriber@demo.test", "demo-password", { javaScriptEnabled: false });
  await page.goto(env.server.base + "/apps/demo/transactions?return=checkout");
  assert.match(await page.locator(".wallet-balance").innerText(), /\$100\.00/);
  await page.locator('.add-funds-form input[name="amount"][value="2500"]').check();
  await page.locator('.add-funds-form input[name="method"][value="paypal"]').check();
  await shot(page, "4-add-funds-390-nojs");
  await Promise.all([page.waitForURL((u) => u.toString().startsWith(env.fake.paypal + "/checkoutnow")), page.locator(".add-funds-button").click()]);
  assert.match(await page.locator("body").innerText(), /25\.00 USD/);
  await Promise.all([page.waitForURL(/\/transactions\?added=2500/), page.getByRole("button", { name: "Pay Now" }).click()]);
  assert.match(await page.locator(".wallet-balance").innerText(), /\$125\.00/);
  assert.match(await page.locator(".notice").first().innerText(), /\$25\.00 added to your wallet/);
  assert.match(await page.locator(".movements").innerText(), /Added funds \(paypal\)/);
  await shot(page, "5-added-390-nojs");
  // Coming back again (a reload of the return address) adds nothing more.
  const back = page.url().replace(/\/transactions\?.*/, "/transactions");
  await page.goto(back);
  assert.match(await page.locator(".wallet-balance").innerText(), /\$125\.00/);
  await context.close();
});

test("Add funds by PayPal with JavaScript (desktop): the island starts the payment and the wallet grows once", async () => {
  const env = withPayPal;
  const { context, page } = await signIn(env, "follower@demo.test", "demo-password", { viewport: { width: 1280, height: 900 } });
  const errors = watchErrors(page);
  await page.goto(env.server.base + "/apps/demo/transactions");
  await page.locator('.add-funds-form[data-hydrated="true"]').waitFor();
  const before = await page.locator(".wallet-balance strong").innerText();
  await page.locator(".amount-choice", { hasText: "$10.00" }).click();
  assert.match(await page.locator(".add-funds-button").innerText(), /Add funds with PayPal/);
  await shot(page, "6-add-funds-1280-js");
  await Promise.all([page.waitForURL((u) => u.toString().startsWith(env.fake.paypal + "/checkoutnow")), page.locator(".add-funds-button").click()]);
  await Promise.all([page.waitForURL(/\/transactions\?added=1000/), page.getByRole("button", { name: "Pay Now" }).click()]);
  const after = await page.locator(".wallet-balance strong").innerText();
  const cents = (s) => Math.round(parseFloat(s.replace(/[$,]/g, "")) * 100);
  assert.equal(cents(after) - cents(before), 1000);
  await shot(page, "7-added-1280-js");
  assert.deepEqual(errors, []);
  await context.close();
});

test("the creator names the app's PayPal account on the studio's PayPal screen without JavaScript (phone)", async () => {
  const env = withPayPal;
  const { context, page } = await signIn(env, "creator@demo.test", "demo-password", { javaScriptEnabled: false });
  await page.goto(env.server.base + "/apps/demo/studio/paypal");
  await page.fill('input[name="merchantId"]', "not-an-id");
  await page.fill('input[name="password"]', "demo-password");
  await page.getByRole("button", { name: "Save" }).click();
  assert.match(await page.locator(".field-error").first().innerText(), /merchant ID is 13 letters and digits/);
  await shot(page, "8-studio-paypal-error-390-nojs");
  await page.fill('input[name="merchantId"]', "ABCDEFGHJKLMN");
  // A refused form never gives the password back: it is asked again.
  assert.equal(await page.locator('input[name="password"]').inputValue(), "");
  await page.fill('input[name="password"]', "demo-password");
  await Promise.all([page.waitForURL(/\/studio\/paypal\?notice=saved$/), page.getByRole("button", { name: "Save" }).click()]);
  assert.equal(await page.locator('input[name="merchantId"]').inputValue(), "ABCDEFGHJKLMN");
  assert.match(await page.locator(".fees-owed").innerText(), /Owed: \$0\.00/);
  const { scroll, inner } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
  assert.ok(scroll <= inner, "fits the phone");
  await shot(page, "9-studio-paypal-390-nojs");
  await context.close();
});
