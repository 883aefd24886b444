// The PayPal path of the checkout (SPEC.md section 4) against the local fake
// PayPal (scripts/fakepaypal): create the PayPal order, go to its approval
// page, approve, come back to payment-success, which captures and shows
// 'Payment Successful!'. Cancelling returns to cancel_order.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startServer, startFakePayments, launchBrowser, signIn, watchErrors, screenshotDir } from "./helpers.mjs";

mkdirSync(screenshotDir, { recursive: true });
const shot = (page, name) => page.screenshot({ path: join(screenshotDir, "paypal-" + name + "-390x844.png"), fullPage: true });
const env = { server: null, browser: null, fake: null, fakeURL: "" };

before(async () => {
  const fake = await startFakePayments(["-client-id", "browser-client", "-client-secret", "browser-secret", "-webhook-id", "WH-BROWSER"]);
  env.fake = fake;
  env.fakeURL = fake.paypal;
  env.server = await startServer({
    PAYPAL_CLIENT_ID: "browser-client",
    PAYPAL_CLIENT_SECRET: "browser-secret",
    PAYPAL_API_BASE: fake.paypal,
    PAYPAL_WEBHOOK_ID: "WH-BROWSER",
  });
  env.browser = await launchBrowser();
});

after(async () => {
  await env.browser?.close();
  await env.server?.stop();
  env.fake?.stop();
});

// toPayment puts an item without shipping (found by search) in the cart
// and goes to the checkout's payment step.
async function toPayment(page, search) {
  await page.goto(env.server.base + "/apps/demo/store?search=" + encodeURIComponent(search));
  await Promise.all([page.waitForURL(/\/store\/items\//), page.locator(".item-card a").first().click()]);
  await page.locator('.add-to-cart[data-hydrated="true"]').waitFor();
  await page.locator(".add-button").click();
  await page.locator(".added-alert", { hasText: "Added" }).waitFor();
  await page.goto(env.server.base + "/apps/demo/checkout");
  await Promise.all([page.waitForURL(/orderId=/), page.getByRole("button", { name: "Continue to Payment" }).click()]);
  await page.locator('.checkout-pay[data-hydrated="true"]').waitFor();
}

test("only configured methods are offered: wallet and PayPal, no card without Stripe keys", async () => {
  const { context, page } = await signIn(env, "subscriber@demo.test");
  await toPayment(page, "brush");
  const methods = await page.locator(".method").allInnerTexts();
  assert.equal(methods.length, 2, methods.join(" | "));
  assert.match(methods[0], /Wallet/);
  assert.match(methods[1], /PayPal/);
  // Cancelling on PayPal's page returns to cancel_order.
  await page.locator(".method", { hasText: "PayPal" }).click();
  await Promise.all([page.waitForURL((u) => u.toString().startsWith(env.fakeURL)), page.locator(".pay-button").click()]);
  await Promise.all([page.waitForURL(/\/apps\/demo\/cancel_order/), page.getByRole("link", { name: "Cancel and return to merchant" }).click()]);
  await page.getByRole("link", { name: "View My Orders" }).waitFor();
  await page.getByRole("link", { name: "Continue Shopping" }).waitFor();
  await shot(page, "cancelled");
  await context.close();
});

test("a follower pays with PayPal: approval page, back to payment-success, captured, 'Payment Successful!'", async () => {
  const { context, page } = await signIn(env, "follower@demo.test");
  const errors = watchErrors(page);
  // The Custom Portrait Commission: $150, more than the demo wallet holds.
  await toPayment(page, "portrait");
  const orderId = new URL(page.url()).searchParams.get("orderId");
  await page.locator(".method", { hasText: "PayPal" }).click();
  assert.match(await page.locator(".pay-button").innerText(), /Pay with PayPal/);
  await shot(page, "1-payment");

  await Promise.all([page.waitForURL((u) => u.toString().startsWith(env.fakeURL + "/checkoutnow")), page.locator(".pay-button").click()]);
  assert.match(await page.locator("body").innerText(), /150\.00 USD/);
  await shot(page, "2-approve");

  await Promise.all([page.waitForURL(/\/apps\/demo\/payment-success/), page.getByRole("button", { name: "Pay Now" }).click()]);
  const back = new URL(page.url());
  assert.equal(back.searchParams.get("processor"), "paypal");
  assert.equal(back.searchParams.get("orderId"), orderId);
  assert.ok(back.searchParams.get("token"), "PayPal's order id comes back as token");
  await page.getByRole("heading", { name: "Payment Successful!" }).waitFor();
  await shot(page, "3-success");
  // The local cart copy is gone and the server cart is empty.
  assert.equal(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("marquee-cart:")).length), 0);

  // A reload captures again, harmlessly.
  await page.reload();
  await page.getByRole("heading", { name: "Payment Successful!" }).waitFor();

  await Promise.all([page.waitForURL(/\/orders\//), page.getByRole("link", { name: "View Order Details" }).click()]);
  assert.match(await page.locator(".status").innerText(), /Payment Confirmed/);
  assert.match(await page.locator("body").innerText(), /PayPal/);
  await shot(page, "4-order");
  assert.deepEqual(errors, []);
  await context.close();
});

test("without JavaScript the PayPal choice still goes to PayPal and back", async () => {
  const { context, page } = await signIn(env, "admin@demo.test");
  await toPayment(page, "sample pack");
  const orderId = new URL(page.url()).searchParams.get("orderId");
  const nojs = await env.browser.newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false, storageState: await context.storageState() });
  const p2 = await nojs.newPage();
  await p2.goto(env.server.base + "/apps/demo/checkout?orderId=" + orderId + "&step=payment");
  await p2.locator('input[name="paymentMethod"][value="paypal"]').check();
  await Promise.all([p2.waitForURL((u) => u.toString().startsWith(env.fakeURL + "/checkoutnow")), p2.locator(".pay-button").click()]);
  await Promise.all([p2.waitForURL(/payment-success/), p2.getByRole("button", { name: "Pay Now" }).click()]);
  await p2.getByRole("heading", { name: "Payment Successful!" }).waitFor();
  await shot(p2, "nojs-success");
  await nojs.close();
  await context.close();
});

// Issue 40 item 3: a fan joins a tier by PayPal at phone size with
// JavaScript on. The plan checkout leads to the payment step, PayPal's
// page asks to agree to the subscription (the tier's price every month),
// and the way back makes them a member whose membership renews through
// PayPal; the upgrade, with an offer code, is PayPal's revise and a
// one-off payment of the discounted difference; cancelling reaches PayPal and offers no way back in it.
test("a follower joins a tier by PayPal through PayPal's subscription page, upgrades (revise, then the difference), then cancels", async () => {
  const { context, page } = await signIn(env, "follower@demo.test", "demo-password", { viewport: { width: 390, height: 844 } });
  const errors = watchErrors(page);
  const base = env.server.base + "/apps/demo";
  await page.goto(base + "/membership");
  await Promise.all([page.waitForURL(/\/checkout\/plan\//), page.getByRole("button", { name: /^Join monthly Studio Circle Membership/ }).click()]);
  await Promise.all([page.waitForURL(/step=payment/), page.getByRole("button", { name: /Pay \$8\.00 by PayPal/ }).click()]);
  await page.locator('.checkout-pay[data-hydrated="true"]').waitFor();
  await page.locator(".method", { hasText: "PayPal" }).click();
  await shot(page, "tier-1-payment");

  await Promise.all([page.waitForURL((u) => u.toString().startsWith(env.fakeURL + "/webapps/billing/subscriptions")), page.locator(".pay-button").click()]);
  const agreement = await page.locator("body").innerText();
  assert.match(agreement, /Studio Circle Membership \(monthly\)/);
  assert.match(agreement, /8\.00 USD every month/);
  await shot(page, "tier-2-agree");

  await Promise.all([page.waitForURL(/\/apps\/demo\/payment-success/), page.getByRole("button", { name: "Agree & Subscribe" }).click()]);
  const back = new URL(page.url());
  assert.equal(back.searchParams.get("processor"), "paypal");
  assert.match(back.searchParams.get("subscription_id") ?? "", /^I-/);
  await page.getByRole("heading", { name: "Payment Successful!" }).waitFor();
  await shot(page, "tier-3-success");

  await page.goto(base + "/membership");
  assert.match(await page.locator(".membership-current").innerText(), /Your tier: Studio Circle Membership · renews /);
  assert.match(await page.locator(".membership-paypal").innerText(), /renews through PayPal/);
  // No Join that would orphan the PayPal subscription: moving goes
  // through the change's confirmation.
  assert.equal(await page.locator('form[action*="/checkout/plan/"]').count(), 0);
  await shot(page, "tier-4-member");

  // Issue 40 items 4 and 5: the member upgrades with the creator's code
  // (50% off the first month). PayPal's revise is approved on PayPal's
  // page (the code's price for the renewal it covers, then the list
  // price), then the prorated difference, halved, is paid there as a
  // one-off payment, and the new tier is on at once.
  const creator = await signIn(env, "creator@demo.test");
  const made = await creator.page.request.post(env.server.base + "/api/studio/apps/demo/offers", {
    data: { code: "PPHALF", percentOff: 50, duration: "REPEATING", durationMonths: 1 },
  });
  assert.equal(made.status(), 201, await made.text());
  await creator.context.close();
  await Promise.all([page.waitForURL(/\/membership\/change\//), page.getByRole("link", { name: "Upgrade to Backstage Pass" }).click()]);
  assert.match(await page.locator(".tier-change-paypal").innerText(), /one-off PayPal payment/);
  const full = await page.getByTestId("upgrade-charge").innerText();
  assert.match(full, /^\$[67]\.\d\d$/);
  await page.locator("#tier-code").fill("pphalf");
  await Promise.all([page.waitForURL(/code=pphalf/), page.getByRole("button", { name: "Apply" }).click()]);
  assert.match(await page.locator(".offer-applied").innerText(), /PPHALF: 50% off the first month/);
  assert.match(await page.locator(".tier-change-paypal").innerText(), /at the code's price/);
  const charge = await page.getByTestId("upgrade-charge").innerText();
  assert.match(charge, /^\$3\.\d\d$/);
  await shot(page, "tier-5-upgrade-confirm");
  await Promise.all([
    page.waitForURL((u) => u.toString().startsWith(env.fakeURL + "/webapps/billing/subscriptions")),
    page.getByRole("button", { name: "Continue to PayPal · pay " + charge }).click(),
  ]);
  const revision = await page.locator("body").innerText();
  assert.match(revision, /Backstage Pass \(monthly\)/);
  assert.match(revision, /7\.50 USD first 1 × month/);
  assert.match(revision, /15\.00 USD every month/);
  await shot(page, "tier-6-upgrade-agree");
  await Promise.all([page.waitForURL((u) => u.toString().startsWith(env.fakeURL + "/checkoutnow")), page.getByRole("button", { name: "Agree & Subscribe" }).click()]);
  assert.match(await page.locator("body").innerText(), new RegExp("Pay " + charge.slice(1).replace(".", "\\.") + " USD"));
  await shot(page, "tier-7-upgrade-pay");
  await Promise.all([page.waitForURL(/\/membership\?notice=upgrade/), page.getByRole("button", { name: "Pay Now" }).click()]);
  assert.match(await page.locator(".notice").first().innerText(), /Your new tier is active/);
  assert.match(await page.locator(".membership-current").innerText(), /Your tier: Backstage Pass · renews /);
  await shot(page, "tier-8-upgraded");

  await Promise.all([page.waitForURL(/notice=canceled/), page.getByRole("button", { name: "Cancel" }).click()]);
  assert.match(await page.locator(".membership-current").innerText(), /· ends /);
  assert.match(await page.locator(".membership-paypal").innerText(), /PayPal subscription is cancelled/);
  assert.equal(await page.getByRole("button", { name: "Keep membership" }).count(), 0);
  await shot(page, "tier-9-cancelled");
  assert.deepEqual(errors, []);
  await context.close();
});
