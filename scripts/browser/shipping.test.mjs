import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { useServerAndBrowser, signIn, watchErrors, screenshotDir } from "./helpers.mjs";

const env = useServerAndBrowser();
mkdirSync(screenshotDir, { recursive: true });
const shot = (page, name) => page.screenshot({ path: join(screenshotDir, "shipping-" + name + "-390x844.png"), fullPage: true });

async function noSidewaysScroll(page, what) {
  const [sw, iw] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  assert.ok(sw <= iw, `${what} scrolls sideways at 390 px: ${sw} > ${iw}`);
}

// Issue 43 item 4 on a phone: the creator adds a shipping zone in the
// studio; a fan's checkout offers its countries, shows its rate on the
// shipping step and in the payment step's summary, and the paid order
// records it.
test("a checkout shows the shipping rate of the address's zone at 390 px", async () => {
  const creator = await signIn(env, "creator@demo.test");
  const cpage = creator.page;
  const cerrors = watchErrors(cpage);
  await cpage.goto(env.server.base + "/apps/demo/studio/shipping");
  assert.match(await cpage.locator(".studio-card").first().innerText(), /No zones yet/);
  const add = cpage.locator(".zone-card", { hasText: "New zone" });
  await add.locator('input[name="name"]').fill("North America");
  await add.locator('select[name="countries"]').selectOption(["US", "CA"]);
  await add.locator('input[name="flatRate"]').fill("5");
  await add.locator('input[name="perItem"]').fill("1.50");
  await add.locator('input[name="freeOver"]').fill("100");
  await Promise.all([cpage.waitForURL(/notice=zone-saved/), add.getByRole("button", { name: "Add zone" }).click()]);
  assert.match(await cpage.locator(".zone-summary").innerText(), /North America: \$5\.00 per order, \$1\.50 per extra item, free over \$100\.00/);
  assert.match(await cpage.locator(".zone-summary").innerText(), /Canada, United States/);
  await noSidewaysScroll(cpage, "the shipping screen");
  await shot(cpage, "1-studio");
  assert.deepEqual(cerrors, []);

  const buyer = await signIn(env, "follower@demo.test");
  const page = buyer.page;
  const errors = watchErrors(page);
  await page.goto(env.server.base + "/apps/demo/store?search=pin");
  await Promise.all([page.waitForURL(/\/store\/items\//), page.locator(".item-card a").first().click()]);
  await page.locator('.add-to-cart[data-hydrated="true"]').waitFor();
  await page.locator(".add-button").click();
  await page.locator(".added-alert", { hasText: "Added" }).waitFor();
  await page.goto(env.server.base + "/apps/demo/checkout");
  assert.match(await page.locator(".order-summary").innerText(), /Shipping\s+At the Shipping step/);
  await Promise.all([page.waitForURL(/orderId=/), page.getByRole("button", { name: "Continue to Shipping" }).click()]);

  // The shipping step: the zone's rate for this order, its countries only.
  const rates = page.locator(".shipping-rates");
  assert.match(await rates.innerText(), /North America: \$5\.00/);
  assert.match(await rates.innerText(), /free over \$100\.00/);
  const options = await page.locator('select[name="country"] option').allInnerTexts();
  assert.deepEqual(options, ["Canada", "United States"]);
  for (const [name, value] of [["firstName", "Ada"], ["lastName", "Lovelace"], ["address", "24 Sussex Dr"], ["city", "Ottawa"], ["state", "ON"], ["zipCode", "K1A 0B1X"]]) {
    await page.fill(`input[name="${name}"]`, value);
  }
  await page.locator('select[name="country"]').selectOption("CA");
  await noSidewaysScroll(page, "the shipping step");
  await shot(page, "2-step");
  // A postal code that is not Canadian comes back, as typed.
  await Promise.all([page.waitForLoadState("load"), page.getByRole("button", { name: "Continue to Payment" }).click()]);
  assert.match(await page.locator(".checkout-step").innerText(), /K1A 0B1X is not a postal code of Canada/);
  assert.equal(await page.locator('input[name="address"]').inputValue(), "24 Sussex Dr");
  await page.fill('input[name="zipCode"]', "K1A 0B1");
  await Promise.all([page.waitForURL(/step=payment/), page.getByRole("button", { name: "Continue to Payment" }).click()]);

  // The payment step's summary: $12.00 + $5.00 shipping = $17.00.
  const summary = await page.locator(".order-summary").innerText();
  assert.match(summary, /Shipping\s+\$5\.00/);
  assert.match(summary, /Total\s+\$17\.00/);
  await page.locator('.checkout-pay[data-hydrated="true"]').waitFor();
  await noSidewaysScroll(page, "the payment step");
  await shot(page, "3-payment");
  await Promise.all([page.waitForURL(/payment-success/), page.locator(".pay-button").click()]);
  await page.getByRole("heading", { name: "Payment Successful!" }).waitFor();
  await Promise.all([page.waitForURL(/\/orders\/[a-z2-7]{26}$/), page.getByRole("link", { name: "View Order Details" }).click()]);
  assert.match(await page.locator(".order-summary").innerText(), /Shipping\s+\$5\.00/);
  assert.match(await page.locator(".order-summary").innerText(), /Total\s+\$17\.00/);
  await shot(page, "4-order");
  // The one refusal was the postal code's 400.
  assert.deepEqual(errors.filter((e) => !/^400 .*\/checkout\/shipping$/.test(e)), []);
});
