import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { useServerAndBrowser, signIn, watchErrors, screenshotDir } from "./helpers.mjs";

const env = useServerAndBrowser();
mkdirSync(screenshotDir, { recursive: true });
const shot = (page, name) => page.screenshot({ path: join(screenshotDir, "checkout-" + name + "-390x844.png"), fullPage: true });

test("a follower buys a physical item with the wallet; the creator ships it; the buyer sees the tracking number", async () => {
  const buyer = await signIn(env, "follower@demo.test");
  const page = buyer.page;
  const errors = watchErrors(page);
  await page.goto(env.server.base + "/apps/demo/store?search=pin");
  await Promise.all([page.waitForURL(/\/store\/items\//), page.locator(".item-card a").first().click()]);
  await page.locator('.add-to-cart[data-hydrated="true"]').waitFor();
  await page.locator(".add-button").click();
  await page.locator(".added-alert", { hasText: "Added" }).waitFor();

  // The cart's Checkout button leads to the checkout.
  await page.goto(env.server.base + "/apps/demo/cart");
  await Promise.all([page.waitForURL(/\/checkout$/), page.locator("a.checkout-button").click()]);
  assert.equal(await page.locator(".checkout-steps .step").count(), 3, "Review Cart, Shipping, Payment");
  assert.match(await page.locator(".checkout-steps .step.current").innerText(), /Review Cart/);
  assert.equal(await page.locator(".footer").count(), 0, "no footer on checkout");
  assert.match(await page.locator(".order-summary").innerText(), /Tax\s+\$0\.00/);
  assert.doesNotMatch(await page.locator(".order-summary").innerText(), /Platform fee/);
  await shot(page, "1-review");

  await page.fill('textarea[name="notes"]', "Please gift wrap");
  await Promise.all([page.waitForURL(/orderId=/), page.getByRole("button", { name: "Continue to Shipping" }).click()]);
  assert.match(await page.locator(".checkout-steps .step.current").innerText(), /Shipping/);
  assert.equal(await page.locator(".checkout-steps .step.done a").count(), 1, "Review Cart is done and clickable");
  for (const [name, value] of [["firstName", "Ada"], ["lastName", "Lovelace"], ["address", "1 Main St"], ["city", "Portland"], ["state", "OR"], ["zipCode", "97201"]]) {
    await page.fill(`input[name="${name}"]`, value);
  }
  assert.equal(await page.locator('select[name="country"]').inputValue(), "US");
  await shot(page, "2-shipping");
  await Promise.all([page.waitForURL(/step=payment/), page.getByRole("button", { name: "Continue to Payment" }).click()]);
  assert.equal(await page.locator(".checkout-steps .step.done a").count(), 2, "Review Cart and Shipping link back");
  await page.locator('.checkout-pay[data-hydrated="true"]').waitFor();
  assert.match(await page.locator(".method.selected").innerText(), /Wallet/);
  assert.match(await page.locator(".method.selected").innerText(), /Balance \$100\.00/);
  await shot(page, "3-payment");

  await Promise.all([page.waitForURL(/payment-success/), page.locator(".pay-button").click()]);
  await page.getByRole("heading", { name: "Payment Successful!" }).waitFor();
  await shot(page, "4-success");
  const number = (await page.locator(".payment-result p").nth(1).innerText()).split(" ")[1];
  assert.match(number, /^ORD-/);

  await Promise.all([page.waitForURL(/\/orders\/[a-z2-7]{26}$/), page.getByRole("link", { name: "View Order Details" }).click()]);
  assert.match(await page.locator(".status").innerText(), /Payment Confirmed/);
  await page.goto(env.server.base + "/apps/demo/orders");
  const card = page.locator(".order-card", { hasText: number });
  assert.match(await card.innerText(), /Payment Confirmed/);
  assert.match(await card.innerText(), /\$12\.00/);
  await shot(page, "5-orders");

  // The creator fulfils it.
  const creator = await signIn(env, "creator@demo.test");
  const cpage = creator.page;
  await cpage.goto(env.server.base + "/apps/demo/store");
  await Promise.all([cpage.waitForURL(/manage\/orders/), cpage.getByRole("link", { name: "Fulfil" }).click()]);
  await Promise.all([cpage.waitForURL(/status=PAID/), cpage.locator(".status-filters a", { hasText: "Payment Confirmed" }).click()]);
  const mine = cpage.locator(`.manage-card[data-order="${number}"]`);
  await Promise.all([cpage.waitForURL(/notice=/), mine.getByRole("button", { name: "Mark Processing" }).click()]);
  await cpage.goto(env.server.base + "/apps/demo/manage/orders?status=PROCESSING");
  await mine.locator('input[name="trackingNumber"]').fill("1Z999AA10123456784");
  await shot(cpage, "6-fulfil");
  await Promise.all([cpage.waitForURL(/notice=/), mine.getByRole("button", { name: "Mark Shipped" }).click()]);
  await cpage.locator(".added-alert", { hasText: "is now Shipped" }).waitFor();
  // It left the Processing list: back to every order, where it stays.
  assert.doesNotMatch(cpage.url(), /status=PROCESSING/);
  assert.match(await mine.locator(".status").innerText(), /Shipped/);
  await cpage.goto(env.server.base + "/apps/demo/manage/orders");
  assert.match(await mine.locator(".status").innerText(), /Shipped/, "a shipped order stays in the default list");
  await cpage.goto(env.server.base + "/apps/demo/manage/orders?status=SHIPPED");
  assert.match(await mine.innerText(), /Tracking number: 1Z999AA10123456784/);
  await shot(cpage, "7-shipped");

  // The buyer sees it shipped, with the tracking number.
  await page.goto(env.server.base + "/apps/demo/orders");
  await Promise.all([page.waitForURL(/\/orders\/[a-z2-7]{26}$/), page.locator(".order-card", { hasText: number }).click()]);
  assert.match(await page.locator(".status").innerText(), /Shipped/);
  assert.match(await page.locator(".tracking").innerText(), /1Z999AA10123456784/);
  assert.match(await page.locator(".address").innerText(), /Portland, OR 97201/);
  await shot(page, "8-buyer-shipped");
  await page.goto(env.server.base + "/apps/demo/transactions");
  assert.match(await page.locator(".wallet-balance").innerText(), /\$88\.00/);
  await shot(page, "9-wallet");
  assert.deepEqual(errors, []);
  await buyer.context.close();
  await creator.context.close();
});

test("an order the wallet cannot cover offers Add funds at Review Cart instead of a way on that would fail", async () => {
  const { context, page } = await signIn(env, "subscriber@demo.test");
  // The Custom Portrait Commission costs $150, more than the $100 demo
  // balance, and the wallet is the only method here.
  await page.goto(env.server.base + "/apps/demo/store?search=portrait");
  await Promise.all([page.waitForURL(/\/store\/items\//), page.locator(".item-card a").first().click()]);
  await page.locator('.add-to-cart[data-hydrated="true"]').waitFor();
  await page.locator(".add-button").click();
  await page.locator(".added-alert", { hasText: "Added" }).waitFor();
  await page.goto(env.server.base + "/apps/demo/checkout");
  assert.equal(await page.locator(".checkout-steps .step").count(), 2, "no Shipping step without a physical item");
  assert.match(await page.locator(".wallet-short").innerText(), /Your wallet holds \$100\.00, less than this order's \$150\.00/);
  assert.equal(await page.getByRole("button", { name: "Continue to Payment" }).count(), 0);
  await shot(page, "10-add-funds");
  await Promise.all([page.waitForURL(/\/transactions\?return=checkout#add-funds$/), page.locator("a.add-funds-link").click()]);
  await page.locator(".add-funds").waitFor();
  await context.close();
});
