import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { useServerAndBrowser, signIn, watchErrors, screenshotDir } from "./helpers.mjs";

// The member's path without dead ends (issue 27): a paid ticket survives
// leaving, and a size is asked for, never guessed; with JavaScript on and off.
const env = useServerAndBrowser();
const EVENT = "Summer Tour Kick-off";

// buyTicket pays the demo's tour ticket from the member's wallet through the
// same calls the checkout makes, from the signed-in page.
async function buyTicket(page) {
  return page.evaluate(async () => {
    const call = async (method, path, body) => {
      const r = await fetch(path, { method, headers: { "Content-Type": "application/json" }, body: body && JSON.stringify(body) });
      const out = await r.json();
      if (!out.success) throw new Error(path + ": " + out.message);
      return out.data;
    };
    const shop = await call("GET", "/api/store/apps/demo/store");
    const storeId = shop.store.id;
    const items = await call("GET", "/api/store/" + storeId + "/items?search=Ticket");
    const ticket = items.items.find((i) => i.type === "EVENT_TICKET");
    await call("POST", "/api/store/" + storeId + "/cart/items", { storeItemId: ticket.id, variantId: null, quantity: 1 });
    const order = await call("POST", "/api/store/" + storeId + "/orders/checkout", { paymentMethod: "musepay" });
    await call("POST", "/api/store/" + storeId + "/musepay/process", { orderId: order.id });
    return order.id;
  });
}

async function openEvent(page) {
  await page.goto(env.server.base + "/apps/demo/events");
  await Promise.all([page.waitForURL(/\/events\/[a-z2-7]{26}$/), page.locator("a", { hasText: EVENT }).first().click()]);
}

test("a ticket holder is asked before leaving, keeps the ticket and rejoins for free", async () => {
  const { context, page } = await signIn(env, "moderator@demo.test");
  const errors = watchErrors(page);
  await page.goto(env.server.base + "/apps/demo/events");
  const orderId = await buyTicket(page);
  await openEvent(page);
  await page.locator('.event-details[data-hydrated="true"]').waitFor();
  const count = page.locator(".attendee-count");
  const attending = Number(await count.innerText());

  await page.locator("button", { hasText: "Leave Event" }).click();
  const ask = page.locator(".leave-confirm");
  await ask.waitFor();
  assert.match(await ask.innerText(), /Your ticket stays yours/);
  assert.equal(Number(await count.innerText()), attending, "asking changes nothing");
  await page.screenshot({ path: join(screenshotDir, "member-path-leave-ask-390x844.png"), fullPage: true });
  // Stay closes the question; Leave asks again.
  await ask.locator("a", { hasText: "Stay" }).click();
  await ask.waitFor({ state: "detached" });
  await page.locator("button", { hasText: "Leave Event" }).click();
  await ask.locator("button", { hasText: "Yes, leave" }).click();
  const rejoin = page.locator("button", { hasText: "Rejoin Event" });
  await rejoin.waitFor();
  assert.equal(await page.locator("a.button", { hasText: "Get Ticket" }).count(), 0, "a holder is not sold the ticket again");
  assert.equal(Number(await count.innerText()), attending - 1);
  await page.screenshot({ path: join(screenshotDir, "member-path-rejoin-390x844.png"), fullPage: true });
  await rejoin.click();
  await page.locator("button", { hasText: "Leave Event" }).waitFor();
  assert.equal(Number(await count.innerText()), attending);

  // The order stays paid.
  await page.goto(env.server.base + "/apps/demo/orders/" + orderId);
  assert.doesNotMatch(await page.locator("main").innerText(), /Refunded|Cancelled/i);
  assert.deepEqual(errors, []);
  await context.close();
});

test("without JavaScript, Leave asks on the page and Rejoin is a plain form", async () => {
  const js = await signIn(env, "jonah@demo.test");
  await js.page.goto(env.server.base + "/apps/demo/events");
  await buyTicket(js.page);
  await js.context.close();

  const { context, page } = await signIn(env, "jonah@demo.test", "demo-password", { javaScriptEnabled: false });
  await openEvent(page);
  await Promise.all([page.waitForURL(/\?confirm=leave$/), page.locator("button", { hasText: "Leave Event" }).click()]);
  assert.match(await page.locator(".leave-confirm").innerText(), /Your ticket stays yours/);
  await page.screenshot({ path: join(screenshotDir, "member-path-leave-ask-nojs-390x844.png"), fullPage: true });
  await Promise.all([page.waitForURL(/\/events\/[a-z2-7]{26}$/), page.locator("button", { hasText: "Yes, leave" }).click()]);
  await Promise.all([page.waitForLoadState(), page.locator("button", { hasText: "Rejoin Event" }).click()]);
  await page.locator("button", { hasText: "Leave Event" }).waitFor();
  await context.close();
});

test("the item page asks for a size, and the cart and order show it", async () => {
  const { context, page } = await signIn(env, "aria@demo.test", "demo-password", { viewport: { width: 1280, height: 900 } });
  const errors = watchErrors(page);
  await page.goto(env.server.base + "/apps/demo/store");
  await Promise.all([page.waitForURL(/\/store\/items\//), page.locator(".item-card a", { hasText: "Lighthouse Hoodie" }).click()]);
  await page.locator('.add-to-cart[data-hydrated="true"]').waitFor();
  await page.locator(".add-button").click();
  const ask = page.locator(".add-to-cart .inline-error");
  await ask.waitFor();
  assert.equal(await ask.innerText(), "Please choose a size for Lighthouse Hoodie");
  assert.equal(await page.locator(".variants").getAttribute("aria-invalid"), "true");
  await page.screenshot({ path: join(screenshotDir, "member-path-choose-size-1280x900.png") });
  await page.locator('.variant[data-value="M"]').click();
  assert.equal(await ask.count(), 0, "choosing clears the question");
  await page.locator(".add-button").click();
  await page.locator(".added-alert", { hasText: "Added" }).waitFor();

  await page.goto(env.server.base + "/apps/demo/cart");
  assert.match(await page.locator(".cart-line", { hasText: "Lighthouse Hoodie" }).innerText(), /Size: M/);
  assert.deepEqual(errors, []);
  await context.close();
});

test("without JavaScript the browser asks for a size, and the chosen one reaches the cart", async () => {
  const { context, page } = await signIn(env, "subscriber@demo.test", "demo-password", { javaScriptEnabled: false });
  await page.goto(env.server.base + "/apps/demo/store");
  await Promise.all([page.waitForURL(/\/store\/items\//), page.locator(".item-card a", { hasText: "Night Shift Tour Tee" }).click()]);
  const itemUrl = page.url();
  await page.locator(".add-button").click();
  // The required radios keep the form from posting.
  await page.waitForTimeout(300);
  assert.equal(page.url(), itemUrl, "no post without a size");
  assert.equal(await page.locator('input[name="variantId"]:invalid').count() > 0, true);
  await page.locator('.variant[data-value="L"]').click();
  await page.screenshot({ path: join(screenshotDir, "member-path-size-nojs-390x844.png") });
  await Promise.all([page.waitForURL(/added=1/), page.locator(".add-button").click()]);
  await page.goto(env.server.base + "/apps/demo/cart");
  assert.match(await page.locator(".cart-line", { hasText: "Night Shift Tour Tee" }).innerText(), /Size: L/);
  await context.close();
});

test("the landing page's link icons come from our origin, and the sitemap and feed answer", async () => {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const foreign = [];
  page.on("request", (r) => {
    if (!r.url().startsWith(env.server.base) && !r.url().startsWith("data:")) foreign.push(r.url());
  });
  await page.goto(env.server.base + "/apps/demo", { waitUntil: "networkidle" });
  const links = page.locator(".links");
  await links.scrollIntoViewIfNeeded();
  assert.match(await links.locator(".favicon").first().getAttribute("style"), /\/apps\/demo\/link-icons\//);
  await links.screenshot({ path: join(screenshotDir, "member-path-link-icons-390x844.png") });
  assert.deepEqual(foreign, [], "no third-party request");
  for (const path of ["/robots.txt", "/sitemap.xml", "/apps/demo/sitemap.xml", "/apps/demo/feed.xml"]) {
    const r = await page.request.get(env.server.base + path);
    assert.equal(r.status(), 200, path);
  }
  await context.close();
});
