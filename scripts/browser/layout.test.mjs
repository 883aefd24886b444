import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { useServerAndBrowser, signIn, watchErrors, screenshotDir, root } from "./helpers.mjs";

// Looks finished on a phone and a desktop (issue 27, item 5): every page
// fits a 390 px phone, a desktop gets a real two-column layout, the install
// banner shows only where installing is possible and covers nothing, the
// filters fold on a phone, the store's first row loads first, and the
// money pages say what happened in words.
const env = useServerAndBrowser();
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

function cli(...args) {
  return execFileSync(join(root, "bin", "marquee"), args, { env: env.server.env, cwd: root, stdio: "pipe" }).toString();
}

// firstHref is the first link on a list page that matches the pattern.
async function firstHref(page, path, pattern) {
  await page.goto(env.server.base + path);
  const hrefs = await page.$$eval("a[href]", (as) => as.map((a) => a.getAttribute("href")));
  const href = hrefs.find((h) => pattern.test(h));
  assert.ok(href, "a link like " + pattern + " on " + path);
  return href;
}

// The pages a member walks, by name (the screenshots are named after them).
async function memberPages(page) {
  return {
    landing: "/apps/demo",
    community: "/apps/demo/community",
    post: await firstHref(page, "/apps/demo/community", /\/posts\/[a-z2-7]{26}$/),
    store: "/apps/demo/store",
    item: await firstHref(page, "/apps/demo/store", /\/store\/items\/[a-z2-7]{26}$/),
    events: "/apps/demo/events",
    event: await firstHref(page, "/apps/demo/events", /\/events\/[a-z2-7]{26}$/),
    donate: "/apps/demo/donate",
    profile: "/apps/demo/profile",
    cart: "/apps/demo/cart",
    "create-event": "/apps/demo/create-event",
    "create-post": "/apps/demo/create-post",
    orders: "/apps/demo/orders",
    transactions: "/apps/demo/transactions",
    notifications: "/apps/demo/notifications",
  };
}

async function overflow(page) {
  return page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
}

function box(page, selector) {
  return page.locator(selector).first().boundingBox();
}

test("every page fits a 390 px phone and fills a 1280 px desktop; screenshots of both", async () => {
  const { context, page } = await signIn(env, "creator@demo.test");
  const errors = watchErrors(page);
  const pages = await memberPages(page);
  for (const [name, path] of Object.entries(pages)) {
    await page.setViewportSize(PHONE);
    await page.goto(env.server.base + path);
    await page.waitForLoadState("load");
    const o = await overflow(page);
    assert.ok(o.scroll <= o.inner, `${name} is ${o.scroll}px wide on a ${o.inner}px phone`);
    await page.screenshot({ path: join(screenshotDir, `layout-${name}-390x844.png`), fullPage: true });
    await page.setViewportSize(DESKTOP);
    const d = await overflow(page);
    assert.ok(d.scroll <= d.inner, `${name} is ${d.scroll}px wide on a ${d.inner}px desktop`);
    // No phone column centred in white: the page's content is desktop wide.
    const main = await box(page, "main.page");
    assert.ok(main.width >= 1100, `${name}: the page column is ${main.width}px on a desktop`);
    await page.screenshot({ path: join(screenshotDir, `layout-${name}-1280x900.png`), fullPage: true });
  }
  // An empty cart answers 404 by SPEC ("no cart"): the page says it is empty.
  assert.deepEqual(errors.filter((e) => !/^404 .*\/cart$/.test(e)), []);
  await context.close();
});

test("at 1280 px the side columns sit beside the content and the grids widen", async () => {
  const { context, page } = await signIn(env, "creator@demo.test", "demo-password", { viewport: DESKTOP });
  const pages = await memberPages(page);
  const beside = async (name, side, content) => {
    const a = await box(page, side);
    const b = await box(page, content);
    assert.ok(a && b, `${name}: ${side} and ${content} are shown`);
    assert.ok(a.x + a.width <= b.x || b.x + b.width <= a.x, `${name}: ${side} ${JSON.stringify(a)} is beside ${content} ${JSON.stringify(b)}`);
    assert.ok(a.y < b.y + b.height && b.y < a.y + a.height, `${name}: ${side} and ${content} share the same rows`);
  };
  // columns counts the cards in the first row of a grid.
  const columns = (selector) =>
    page.$$eval(selector, (els) => els.filter((e) => Math.abs(e.getBoundingClientRect().top - els[0].getBoundingClientRect().top) < 2).length);

  await page.goto(env.server.base + pages.landing);
  await beside("landing", ".landing-side", ".landing-main");
  // Four items a row, or all of them in one when there are fewer.
  const featured = await page.locator(".landing-main .item-grid > li").count();
  assert.ok(featured > 0, "landing: featured items are shown");
  assert.ok((await columns(".landing-main .item-grid > li")) >= Math.min(4, featured), "landing: four items a row");
  await page.goto(env.server.base + pages.community);
  assert.ok((await columns(".feed > li")) >= 3, "community: three posts a row");
  await page.goto(env.server.base + pages.store);
  await beside("store", ".store-filters", ".store-grid");
  assert.ok((await columns(".store-grid > li")) >= 4, "store: four items a row");
  assert.equal(await page.locator(".filters-toggle").isVisible(), false, "a desktop needs no Filters button");
  await page.goto(env.server.base + pages.item);
  await beside("item", ".gallery", ".item-body");
  await beside("item buy box", ".gallery", ".add-to-cart");
  await page.goto(env.server.base + pages.events);
  await beside("events", ".event-filters", ".events-results");
  await page.goto(env.server.base + pages.event);
  await beside("event", ".carousel", ".event-details");
  await page.goto(env.server.base + pages.post);
  await beside("post", ".post-detail", ".comments");
  await page.goto(env.server.base + pages.profile);
  await beside("profile", ".profile-head", ".app-facts");
  await context.close();
});

test("the create-event form fits a phone with its submit button on screen", async () => {
  const { context, page } = await signIn(env, "creator@demo.test");
  await page.goto(env.server.base + "/apps/demo/create-event");
  const form = await box(page, "form.create-form");
  assert.ok(form.x >= 0 && form.x + form.width <= PHONE.width, `the form spans ${form.x}..${form.x + form.width}`);
  const submit = page.locator('form.create-form button[type="submit"]');
  await submit.scrollIntoViewIfNeeded();
  const b = await submit.boundingBox();
  assert.ok(b.x >= 0 && b.x + b.width <= PHONE.width, `submit spans ${b.x}..${b.x + b.width}`);
  for (const input of await page.locator("form.create-form input, form.create-form select, form.create-form textarea").all()) {
    const r = await input.boundingBox();
    if (r) assert.ok(r.x + r.width <= PHONE.width, `${await input.getAttribute("name")} ends at ${r.x + r.width}`);
  }
  const o = await overflow(page);
  assert.ok(o.scroll <= o.inner);
  await context.close();
});

test("buttons speak the page's font", async () => {
  const { context, page } = await signIn(env, "creator@demo.test");
  for (const path of ["/apps/demo/store", "/apps/demo/events", "/apps/demo/profile", "/apps/demo/donate", "/apps/demo/create-post"]) {
    // networkidle: a page an island reloads (or still loading its
    // stylesheet at the end of the body) is read once it has settled.
    await page.goto(env.server.base + path, { waitUntil: "networkidle" });
    const fonts = await page.$$eval("button, input, select, textarea", (els) => {
      const body = getComputedStyle(document.body).fontFamily;
      return els.filter((e) => getComputedStyle(e).fontFamily !== body).map((e) => e.outerHTML.slice(0, 80));
    });
    assert.deepEqual(fonts, [], path + ": controls in another font");
  }
  await context.close();
});

// The install banner only where installing is possible, never over the
// footer or its create menu.
test("the install banner shows where installing is possible and covers nothing", async () => {
  // The app's worker (scope /apps/demo/: the landing at /apps/demo is
  // outside it, as in the manifest) is registered.
  const ready = (page) => page.waitForFunction(() => navigator.serviceWorker?.getRegistration("/apps/demo/").then((r) => Boolean(r)));
  // Chromium without beforeinstallprompt: nothing to offer.
  {
    const { context, page } = await signIn(env, "aria@demo.test");
    await page.goto(env.server.base + "/apps/demo");
    await ready(page);
    assert.equal(await page.locator(".install-banner").count(), 0, "no banner without beforeinstallprompt");
    // The browser says it can install: the banner offers it.
    await page.waitForFunction(() => {
      const e = new Event("beforeinstallprompt", { cancelable: true });
      e.prompt = async () => {};
      e.userChoice = Promise.resolve({ outcome: "dismissed" });
      window.dispatchEvent(e);
      return document.querySelector(".install-banner");
    }, null, { polling: 100 });
    assert.match(await page.locator(".install-banner").innerText(), /Install/);
    assert.doesNotMatch(await page.locator(".install-banner").innerText(), /Add to Home Screen/);
    // A card in the page's flow, after the content: scrolled into view it
    // ends above the footer.
    assert.equal(await page.locator(".install-banner").evaluate((b) => getComputedStyle(b).position), "static");
    await page.locator(".install-banner").scrollIntoViewIfNeeded();
    const banner = await box(page, ".install-banner");
    const footer = await box(page, ".footer-bar");
    assert.ok(banner.y + banner.height <= footer.y, "the banner ends above the footer");
    // The create menu opens over the banner, not under it.
    await page.locator(".footer-create summary").click();
    const menu = page.locator(".footer-create-menu");
    await menu.waitFor();
    const m = await menu.boundingBox();
    const top = await page.evaluate(([x, y]) => document.elementFromPoint(x, y)?.closest(".footer-create-menu") !== null, [m.x + m.width / 2, m.y + m.height - 6]);
    assert.ok(top, "the create menu is on top");
    await page.screenshot({ path: join(screenshotDir, "layout-install-menu-390x844.png") });
    await context.close();
  }
  // iOS Safari: the how-to.
  const iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
  {
    const { context, page } = await signIn(env, "aria@demo.test", "demo-password", { userAgent: iphone });
    await page.goto(env.server.base + "/apps/demo");
    await page.locator(".install-banner", { hasText: "Add to Home Screen" }).waitFor();
    await context.close();
  }
  // Chrome on iOS cannot add to the home screen: no how-to.
  {
    const crios = iphone.replace("Version/17.5 Mobile/15E148 Safari", "CriOS/126.0.6478.54 Mobile/15E148 Safari");
    const { context, page } = await signIn(env, "aria@demo.test", "demo-password", { userAgent: crios });
    await page.goto(env.server.base + "/apps/demo");
    await ready(page);
    await page.evaluate(() => new Promise((r) => requestIdleCallback(() => r(), { timeout: 500 })));
    assert.equal(await page.locator(".install-banner").count(), 0, "no how-to in Chrome on iOS");
    await context.close();
  }
});

// api calls the JSON API from the page, as the islands do.
function api(page, method, path, body) {
  return page.evaluate(async ([method, path, body]) => {
    const r = await fetch(path, { method, headers: { "Content-Type": "application/json" }, body: body && JSON.stringify(body) });
    const out = await r.json();
    if (!out.success) throw new Error(path + ": " + out.message);
    return out.data;
  }, [method, path, body]);
}

// wider lists what sticks out past the right edge of the window without
// being inside something that scrolls or clips sideways on purpose (a
// gallery, a story strip, a table's wrapper).
function wider(page) {
  return page.evaluate(() => {
    const out = [];
    const w = window.innerWidth;
    for (const el of document.querySelectorAll("body *")) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.right <= w + 1) continue;
      let clipped = false;
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        const o = getComputedStyle(p).overflowX;
        if (o === "auto" || o === "scroll" || o === "hidden" || o === "clip") { clipped = true; break; }
      }
      if (!clipped && getComputedStyle(el).position !== "fixed") out.push(el.tagName.toLowerCase() + "." + [...el.classList].join(".") + " ends at " + Math.round(r.right));
    }
    return out.slice(0, 5);
  });
}

// No page scrolls sideways on a phone: the studio's screens, fulfilment
// with an order in Processing, the order pages, checkout's steps, the item
// form and the auth site, each looked at in a screenshot.
test("at 390 px no page scrolls sideways: studio, orders, checkout, forms and the auth site", async () => {
  const fan = await signIn(env, "member@demo.test");
  cli("wallet", "credit", "demo", "member@demo.test", "100");
  await fan.page.goto(env.server.base + "/apps/demo/store");
  await api(fan.page, "POST", "/api/notifications/follow/" + (await api(fan.page, "GET", "/api/app/demo/landing")).id).catch(() => null);
  const storeId = (await api(fan.page, "GET", "/api/store/apps/demo/store")).store.id;
  const physical = (await api(fan.page, "GET", "/api/store/" + storeId + "/items?type=PHYSICAL")).items
    .find((i) => (i.variants ?? []).length === 0 && (i.stock === null || i.stock > 0));
  await api(fan.page, "POST", "/api/store/" + storeId + "/cart/items", { storeItemId: physical.id, variantId: null, quantity: 2 });
  const shippingAddress = { firstName: "Bartholomew-Maximilian", lastName: "Featherstonehaugh-Cholmondeley", address: "1234 Extraordinarily Long Street Name Boulevard, Apartment 5678",
    city: "Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch", state: "OR", zipCode: "97201" };
  const order = await api(fan.page, "POST", "/api/store/" + storeId + "/orders/checkout", { paymentMethod: "musepay", shippingAddress, notes: "Please-wrap-it-in-the-extraordinarily-long-ribbon-without-spaces-anywhere" });
  await api(fan.page, "POST", "/api/store/" + storeId + "/musepay/process", { orderId: order.id });
  // A second cart, to walk checkout's steps.
  await api(fan.page, "POST", "/api/store/" + storeId + "/cart/items", { storeItemId: physical.id, variantId: null, quantity: 1 });

  const creator = await signIn(env, "creator@demo.test");
  await api(creator.page, "PUT", "/api/store/" + storeId + "/orders/" + order.id + "/status", { status: "PROCESSING" });
  const item = (await api(creator.page, "GET", "/api/store/" + storeId + "/items?type=DIGITAL")).items[0];

  const look = async (page, name, path) => {
    await page.setViewportSize(PHONE);
    if (path) await page.goto(path.startsWith("http") ? path : env.server.base + path, { waitUntil: "load" });
    const o = await overflow(page);
    await page.screenshot({ path: join(screenshotDir, `phone-${name}-390.png`), fullPage: true });
    assert.ok(o.scroll <= o.inner, `${name} is ${o.scroll}px wide on a ${o.inner}px phone`);
    assert.deepEqual(await wider(page), [], `${name}: nothing sticks out`);
  };
  const cp = creator.page;
  for (const [name, path] of [
    ["apps", "/apps"],
    ["studio", "/apps/demo/studio"],
    ["studio-features", "/apps/demo/studio/features"],
    ["studio-plans", "/apps/demo/studio/plans"],
    ["studio-members", "/apps/demo/studio/members"],
    ["studio-analytics", "/apps/demo/studio/analytics"],
    ["studio-analytics-month", "/apps/demo/studio/analytics?bucket=month"],
    ["studio-moderation", "/apps/demo/studio/moderation"],
    ["studio-payouts", "/apps/demo/studio/payouts"],
    ["studio-paypal", "/apps/demo/studio/paypal"],
    ["donations", "/apps/demo/donations"],
    ["fulfil-all", "/apps/demo/manage/orders"],
    ["fulfil-processing", "/apps/demo/manage/orders?status=PROCESSING"],
    ["order-creator", "/apps/demo/orders/" + order.id],
    ["item-new", "/apps/demo/store/items/new"],
    ["item-edit", "/apps/demo/store/items/" + item.id + "/edit"],
    ["account", env.server.auth + "/authenticate/account?app=demo"],
  ]) {
    await look(cp, name, path);
  }
  const fp = fan.page;
  await look(fp, "order-processing", "/apps/demo/orders/" + order.id);
  await look(fp, "orders", "/apps/demo/orders");
  await look(fp, "checkout-review", "/apps/demo/checkout");
  await Promise.all([fp.waitForURL(/orderId=/), fp.getByRole("button", { name: "Continue to Shipping" }).click()]);
  await look(fp, "checkout-shipping");
  for (const [field, value] of Object.entries(shippingAddress)) await fp.fill(`input[name="${field}"]`, value);
  await Promise.all([fp.waitForURL(/step=payment/), fp.getByRole("button", { name: "Continue to Payment" }).click()]);
  await fp.locator('.checkout-pay[data-hydrated="true"]').waitFor();
  await look(fp, "checkout-payment");
  await Promise.all([fp.waitForURL(/payment-success/), fp.locator(".pay-button").click()]);
  await fp.getByRole("heading", { name: "Payment Successful!" }).waitFor();
  await look(fp, "payment-success");
  await look(fp, "report", "/apps/demo/report");
  await look(fp, "search", "/apps/demo/search?q=pin");
  await Promise.all([fan.context.close(), creator.context.close()]);

  // The auth site, signed out.
  const context = await env.browser.newContext({ viewport: PHONE });
  const page = await context.newPage();
  for (const [name, path] of [["signin", "/authenticate/signin?app=demo"], ["signup", "/authenticate/signup?app=demo"], ["forgot", "/authenticate/forgot?app=demo"]]) {
    await look(page, name, env.server.auth + path);
  }
  await context.close();
});

// covered answers the buttons of main whose middle is not theirs to
// click (something else is painted there), scrolled into view one by one.
async function covered(page) {
  const out = [];
  for (const b of await page.locator("main button:visible, main a.button:visible").all()) {
    await b.scrollIntoViewIfNeeded();
    const mine = await b.evaluate((el) => {
      const r = el.getBoundingClientRect();
      const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
      return hit === el || el.contains(hit);
    });
    if (!mine) out.push(await b.innerText());
  }
  return out;
}

// The install banner never covers an action button: on a phone, Pay on
// the payment step is the member's to press, banner or not.
test("at 390 px the install banner never covers Pay on the payment step", async () => {
  const { context, page } = await signIn(env, "follower@demo.test");
  const errors = watchErrors(page);
  cli("wallet", "credit", "demo", "follower@demo.test", "100");
  await page.goto(env.server.base + "/apps/demo/store");
  await page.evaluate(async () => {
    const call = async (method, path, body) => {
      const r = await fetch(path, { method, headers: { "Content-Type": "application/json" }, body: body && JSON.stringify(body) });
      const out = await r.json();
      if (!out.success) throw new Error(path + ": " + out.message);
      return out.data;
    };
    const storeId = (await call("GET", "/api/store/apps/demo/store")).store.id;
    const item = (await call("GET", "/api/store/" + storeId + "/items?type=PHYSICAL")).items
      .find((i) => (i.variants ?? []).length === 0 && (i.stock === null || i.stock > 0));
    await call("POST", "/api/store/" + storeId + "/cart/items", { storeItemId: item.id, variantId: null, quantity: 1 });
  });
  await page.goto(env.server.base + "/apps/demo/checkout");
  await Promise.all([page.waitForURL(/orderId=/), page.getByRole("button", { name: "Continue to Shipping" }).click()]);
  for (const [name, value] of [["firstName", "Ada"], ["lastName", "Lovelace"], ["address", "1 Main St"], ["city", "Portland"], ["state", "OR"], ["zipCode", "97201"]]) {
    await page.fill(`input[name="${name}"]`, value);
  }
  await Promise.all([page.waitForURL(/step=payment/), page.getByRole("button", { name: "Continue to Payment" }).click()]);
  await page.locator('.checkout-pay[data-hydrated="true"]').waitFor();
  await page.waitForFunction(() => navigator.serviceWorker?.getRegistration().then((r) => Boolean(r)));
  await page.waitForFunction(() => {
    const e = new Event("beforeinstallprompt", { cancelable: true });
    e.prompt = async () => {};
    e.userChoice = Promise.resolve({ outcome: "dismissed" });
    window.dispatchEvent(e);
    return document.querySelector(".install-banner");
  }, null, { polling: 100 });
  // Where the page opens: Pay's middle is Pay's.
  await page.evaluate(() => window.scrollTo(0, 0));
  const pay = page.locator(".pay-button");
  const payOpen = await pay.evaluate((el) => {
    const r = el.getBoundingClientRect();
    if (r.bottom > window.innerHeight) return "below the fold";
    const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
    return hit === el || el.contains(hit) ? "pay" : hit?.outerHTML.slice(0, 80);
  });
  assert.ok(payOpen === "pay" || payOpen === "below the fold", "Pay is covered by " + payOpen);
  await page.screenshot({ path: join(screenshotDir, "layout-install-pay-390x844.png") });
  // Scrolled to, each button of the step is its own, Pay too.
  assert.deepEqual(await covered(page), []);
  const b = await box(page, ".install-banner");
  const p = await box(page, ".pay-button");
  assert.ok(b.y >= p.y + p.height || b.y + b.height <= p.y, "the banner and Pay do not overlap");
  await page.locator(".install-banner").scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(screenshotDir, "layout-install-pay-banner-390x844.png"), fullPage: true });
  // Pay still pays.
  await Promise.all([page.waitForURL(/payment-success/), pay.click()]);
  assert.deepEqual(errors, []);
  await context.close();
});

test("store and events filters fold behind a Filters button on a phone, with JavaScript off", async () => {
  const { context, page } = await signIn(env, "aria@demo.test", "demo-password", { javaScriptEnabled: false });
  for (const [path, form] of [["/apps/demo/store", ".store-filters"], ["/apps/demo/events", ".event-filters"]]) {
    await page.goto(env.server.base + path);
    assert.equal(await page.locator(form).isVisible(), false, path + ": folded");
    await page.locator(".filters-toggle").click();
    assert.equal(await page.locator(form).isVisible(), true, path + ": open after Filters");
  }
  // A filter in use keeps them open.
  await page.goto(env.server.base + "/apps/demo/store?type=DIGITAL");
  assert.equal(await page.locator(".store-filters").isVisible(), true);
  await context.close();
});

test("the store's first row loads eagerly and first, the rest lazily", async () => {
  const { context, page } = await signIn(env, "aria@demo.test");
  await page.goto(env.server.base + "/apps/demo/store");
  const imgs = await page.$$eval(".store-grid img", (els) => els.map((e) => [e.getAttribute("loading"), e.getAttribute("fetchpriority")]));
  assert.ok(imgs.length > 4, "the demo store has more than a row of images");
  for (const [i, [loading, priority]] of imgs.entries()) {
    if (i < 4) assert.deepEqual([loading, priority], ["eager", "high"], "image " + i);
    else assert.equal(loading, "lazy", "image " + i);
  }
  await context.close();
});

test("an empty cart says it is empty", async () => {
  const { context, page } = await signIn(env, "follower@demo.test");
  const errors = [];
  page.on("response", (r) => r.status() >= 400 && !r.url().includes("/cart") && errors.push(r.status() + " " + r.url()));
  await page.goto(env.server.base + "/apps/demo/cart");
  await page.locator('.cart[data-hydrated="true"]').waitFor();
  const text = await page.locator("main").innerText();
  assert.match(text, /Your cart is empty/);
  assert.doesNotMatch(text, /Cart not found/);
  assert.equal(await page.locator(".cart .inline-error").count(), 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a new membership is confirmed, /donate shows the new balance, money is worded", async () => {
  cli("wallet", "credit", "demo", "follower@demo.test", "100");
  const { context, page } = await signIn(env, "follower@demo.test");
  const errors = watchErrors(page);
  await page.goto(env.server.base + "/apps/demo/profile");
  const planId = await page.evaluate(async () => {
    const me = await (await fetch("/api/auth/me?appId=demo")).json();
    return me.data.subscription.items[0].id;
  });
  await page.goto(env.server.base + "/apps/demo/checkout/plan/" + planId);
  await Promise.all([page.waitForURL(/\/profile\?joined=1$/), page.locator("form button[type=submit]", { hasText: "with wallet" }).click()]);
  await page.locator(".profile-membership .notice", { hasText: /Welcome! Your membership is active until/ }).waitFor();

  // A donation on /donate with JavaScript: the page shows the new balance.
  await page.goto(env.server.base + "/apps/demo/donate");
  const dollars = (text, label) => Number(new RegExp(label + " \\$([\\d,.]+)").exec(text)[1].replace(",", ""));
  const before = dollars(await page.locator(".donate-page > .meta").innerText(), "Wallet balance:");
  await page.locator('.donate-page-form[data-hydrated="true"]').waitFor();
  await page.fill('.donate-page input[name="amount"]', "5");
  await Promise.all([page.waitForURL(/\/donate\?thanks=1$/), page.locator(".donate-page button[type=submit]").click()]);
  const after = await page.locator(".donate-page > .meta").innerText();
  assert.equal(dollars(after, "Wallet balance:"), before - 5, after);
  assert.equal(dollars(after, "You have given"), 5, after);
  await page.locator(".notice", { hasText: "Thank you for your support!" }).waitFor();

  // Words, not codes, on the wallet and the orders.
  await page.goto(env.server.base + "/apps/demo/transactions");
  const wallet = await page.locator("main").innerText();
  assert.match(wallet, /Donation/);
  assert.doesNotMatch(wallet, /\b(DONATION|PAYMENT|CREDIT|REFUND)\b/);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a refunded order no longer says paid; a shipped order stays findable", async () => {
  const buyer = await signIn(env, "subscriber@demo.test");
  await buyer.page.goto(env.server.base + "/apps/demo/store");
  // Two paid orders from the wallet, as the checkout does: a download (to
  // refund) and a physical item (to ship: only physical orders ship).
  cli("wallet", "credit", "demo", "subscriber@demo.test", "200");
  const orders = await buyer.page.evaluate(async () => {
    const call = async (method, path, body) => {
      const r = await fetch(path, { method, headers: { "Content-Type": "application/json" }, body: body && JSON.stringify(body) });
      const out = await r.json();
      if (!out.success) throw new Error(path + ": " + out.message);
      return out.data;
    };
    const storeId = (await call("GET", "/api/store/apps/demo/store")).store.id;
    const digital = (await call("GET", "/api/store/" + storeId + "/items?type=DIGITAL")).items[0];
    const physical = (await call("GET", "/api/store/" + storeId + "/items?type=PHYSICAL")).items
      .find((i) => (i.variants ?? []).length === 0 && (i.stock === null || i.stock > 0));
    const shippingAddress = { firstName: "Ada", lastName: "Lovelace", address: "1 Main St", city: "Portland", state: "OR", zipCode: "97201" };
    const out = [];
    for (const item of [digital, physical]) {
      await call("POST", "/api/store/" + storeId + "/cart/items", { storeItemId: item.id, variantId: null, quantity: 1 });
      const order = await call("POST", "/api/store/" + storeId + "/orders/checkout",
        item === physical ? { paymentMethod: "musepay", shippingAddress } : { paymentMethod: "musepay" });
      await call("POST", "/api/store/" + storeId + "/musepay/process", { orderId: order.id });
      out.push(order);
    }
    return out;
  });
  const [refunded, shipped] = orders;

  const creator = await signIn(env, "creator@demo.test");
  const cp = creator.page;
  const card = (o) => cp.locator(`.manage-card[data-order="${o.orderNumber}"]`);
  await cp.goto(env.server.base + "/apps/demo/manage/orders?status=PAID");
  await card(refunded).locator('input[name="reason"]').fill("Changed my mind");
  await Promise.all([cp.waitForURL(/notice=/), card(refunded).locator("button", { hasText: "Refund" }).click()]);
  await Promise.all([cp.waitForURL(/notice=/), card(shipped).locator("button", { hasText: "Mark Processing" }).click()]);
  await cp.goto(env.server.base + "/apps/demo/manage/orders?status=PROCESSING");
  await card(shipped).locator('input[name="trackingNumber"]').fill("TRACK-123");
  await Promise.all([cp.waitForURL(/notice=/), card(shipped).locator("button", { hasText: "Mark Shipped" }).click()]);
  assert.match(await cp.locator(".added-alert").innerText(), new RegExp("Order " + shipped.orderNumber + " is now Shipped"));
  // Findable: under All (the default) and under Shipped, in words.
  await cp.goto(env.server.base + "/apps/demo/manage/orders");
  assert.equal(await cp.locator(".status-filters .chip.selected").innerText(), "All");
  assert.match(await card(shipped).locator(".status").innerText(), /^Shipped$/);
  await cp.locator(".status-filters a", { hasText: "Shipped" }).click();
  await card(shipped).waitFor();
  assert.doesNotMatch(await cp.locator("main").innerText(), /\b(PENDING|PAID|PROCESSING|SHIPPED|DELIVERED|CANCELLED|REFUNDED)\b/);
  await creator.context.close();

  await buyer.page.goto(env.server.base + "/apps/demo/orders/" + refunded.id);
  const text = await buyer.page.locator(".payment-state").innerText();
  assert.match(text, /refunded/);
  assert.doesNotMatch(text, /\bpaid\b/);
  await buyer.page.goto(env.server.base + "/apps/demo/orders");
  assert.doesNotMatch(await buyer.page.locator("main").innerText(), /\b(PENDING|PAID|PROCESSING|SHIPPED|DELIVERED|CANCELLED|REFUNDED)\b/);
  await buyer.context.close();
});
