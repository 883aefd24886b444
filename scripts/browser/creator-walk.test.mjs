// Issue 43's "Done when" walk: a brand-new creator, only through the pages
// (no CLI, no database), on a phone with JavaScript and a desktop without:
// signs up, makes an app and follows its launch checklist to Publish; sets
// a shipping zone and the welcome credit; a new fan (signed up through the
// same pages, confirmed by the real mail) buys a physical item with the
// zone's rate and the creator ships it; the fan buys a $10 item from the
// wallet and the creator refunds $3 of it and then the rest; the creator
// credits the fan $5; exports the app (the mailed link's zip); and deletes
// a second app by typing its name. The tests share one walk, in order.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startServer, launchBrowser, startMailpit, signIn, watchErrors, screenshotDir, mailLink, signUpAndConfirm, createApp } from "./helpers.mjs";

const env = { server: null, browser: null, mail: null };
const shots = process.env.SHOTS_DIR || screenshotDir;
mkdirSync(shots, { recursive: true });
const phone = { width: 390, height: 844 };
const desktop = { width: 1280, height: 900 };

before(async () => {
  env.mail = await startMailpit();
  env.server = await startServer({ SMTP_URL: env.mail.smtpUrl, MAIL_FROM: "Marquee <mail@marquee.test>" });
  env.browser = await launchBrowser();
});
after(async () => {
  await env.browser?.close();
  await env.server?.stop();
  env.mail?.stop();
});

const creatorEmail = "nova@walk.test";
const fanEmail = "fan@walk.test";
const password = "a-long-password";
const app = "nova-walk";
const base = () => env.server.base + "/apps/" + app;
// What the walk carries from one test to the next.
const walk = { creator: null, desk: null, fan: null, posterOrder: "", setlistOrder: "" };
const shot = (page, step, width) => page.screenshot({ path: join(shots, `walk-${step}-${width}.png`), fullPage: true });

async function balance(page) {
  await page.goto(base() + "/transactions");
  return (await page.locator(".wallet-balance strong").innerText()).trim();
}

test("1. a new creator signs up, makes an app and follows the launch checklist to Publish (390 px, JavaScript on)", async () => {
  const context = await env.browser.newContext({ viewport: phone });
  const page = await context.newPage();
  walk.creator = { context, page, errors: watchErrors(page) };
  await signUpAndConfirm(env, page, creatorEmail, "novamaker", password);
  await createApp(env, page, app, "Nova Walk");
  assert.match(await page.locator(".launch-progress").innerText(), /0 of 5 steps done/);
  await shot(page, "1-checklist-new", 390);

  // Profile and look, donations, payouts, a first post: each from the studio.
  await page.goto(base() + "/studio");
  await page.fill("#bio", "Night drives, warm synths and the stories behind them.");
  await Promise.all([page.waitForURL(/notice=saved/), page.getByRole("button", { name: "Save profile" }).click()]);
  await page.goto(base() + "/studio/theme");
  await page.selectOption("#theme-font", "lora");
  await Promise.all([page.waitForURL(/\/studio\/theme\?notice=/), page.getByRole("button", { name: "Save theme" }).click()]);
  await page.goto(base() + "/studio/features");
  await page.check('input[name="donations"]');
  await Promise.all([page.waitForURL(/notice=saved/), page.getByRole("button", { name: "Save features" }).click()]);
  await page.goto(base() + "/studio/paypal");
  const paypal = page.locator('form[action$="/studio/paypal"]');
  await paypal.locator('input[name="email"]').fill("nova@example.com");
  await paypal.locator('input[name="password"]').fill(password);
  await Promise.all([page.waitForURL(/\/studio\/paypal\?notice=/), paypal.locator('button[type="submit"]').click()]);
  await page.goto(base() + "/create-post");
  await page.fill("#post-content", "Hello, first fans: the new single is out on Friday.");
  await Promise.all([page.waitForURL(new RegExp("/apps/" + app + "/community$")), page.getByRole("button", { name: "Share" }).click()]);
  await page.goto(base() + "/studio/launch");
  assert.match(await page.locator(".launch-progress").innerText(), /4 of 5 steps done/);

  // Preview as a visitor and as a member, back, then Publish.
  await Promise.all([page.waitForURL(base()), page.getByRole("button", { name: "Preview as a visitor" }).click()]);
  assert.match(await page.locator(".launch-bar.previewing").innerText(), /Previewing as a visitor/);
  await Promise.all([page.waitForURL(base()), page.getByRole("button", { name: "View as a member" }).click()]);
  assert.match(await page.locator(".launch-bar.previewing").innerText(), /Previewing as a member/);
  await shot(page, "1-preview-member", 390);
  await Promise.all([page.waitForURL(base()), page.getByRole("button", { name: "Exit preview" }).click()]);
  await page.goto(base() + "/studio/launch");
  assert.match(await page.locator(".launch-progress").innerText(), /5 of 5 steps done/);
  await Promise.all([page.waitForURL(/notice=published/), page.getByRole("button", { name: "Publish", exact: true }).click()]);
  assert.match(await page.locator("#launch-h").innerText(), /Your app is published/);
  await shot(page, "1-published", 390);
  const visitor = await env.browser.newContext({ viewport: phone });
  assert.equal((await (await visitor.newPage()).goto(base())).status(), 200, "a visitor sees the published app");
  await visitor.close();
});

test("2. a shipping zone; a new fan buys a poster with its rate; the creator ships it (1280 px, JavaScript off)", async () => {
  const desk = await signIn(env, creatorEmail, password, { viewport: desktop, javaScriptEnabled: false });
  walk.desk = desk;
  const page = desk.page;
  desk.errors = watchErrors(page);

  // The zone, the welcome credit and two items, all from the studio.
  await page.goto(base() + "/studio/shipping");
  const add = page.locator(".zone-card", { hasText: "New zone" });
  await add.locator('input[name="name"]').fill("North America");
  await add.locator('select[name="countries"]').selectOption(["US", "CA"]);
  await add.locator('input[name="flatRate"]').fill("4");
  await add.locator('input[name="perItem"]').fill("1");
  await add.locator('input[name="freeOver"]').fill("100");
  await Promise.all([page.waitForURL(/notice=zone-saved/), add.getByRole("button", { name: "Add zone" }).click()]);
  assert.match(await page.locator(".zone-summary").innerText(), /North America: \$4\.00 per order/);
  await shot(page, "2-zone", 1280);
  await page.goto(base() + "/studio/members");
  await page.fill("#welcomeCredit", "30");
  await Promise.all([page.waitForURL(/notice=welcome-saved/), page.getByRole("button", { name: "Save welcome credit" }).click()]);
  const newItem = async (name, type, price) => {
    await page.goto(base() + "/studio");
    await Promise.all([page.waitForURL(/\/store\/items\/new$/), page.locator(".studio-links a", { hasText: "New item" }).click()]);
    await page.fill('input[name="name"]', name);
    await page.selectOption('select[name="type"]', type);
    await page.fill('input[name="price"]', price);
    await page.uncheck('input[name="tracked"]');
    await Promise.all([page.waitForURL(/\/store\/items\/[a-z2-7]{26}$/), page.locator("button", { hasText: "Create Item" }).click()]);
    return page.url();
  };
  walk.poster = await newItem("Tour poster", "PHYSICAL", "12");
  walk.setlist = await newItem("Signed setlist", "DIGITAL", "10");

  // The fan: signed up from the app, confirmed, follows and finds the
  // welcome credit in the wallet.
  const fctx = await env.browser.newContext({ viewport: desktop, javaScriptEnabled: false });
  const fp = await fctx.newPage();
  walk.fan = { context: fctx, page: fp, errors: watchErrors(fp) };
  await signUpAndConfirm(env, fp, fanEmail, "walkfan", password, app);
  await fp.goto(base() + "/transactions");
  assert.match(await fp.locator("h1").first().innerText(), /Follow App to Access Store/);
  await Promise.all([fp.waitForNavigation(), fp.getByRole("button", { name: "Follow" }).click()]);
  assert.equal(await balance(fp), "$30.00");

  // The poster: cart, shipping address, the zone's rate, pay from the wallet.
  await fp.goto(walk.poster);
  await Promise.all([fp.waitForURL(/added=1/), fp.locator(".add-button").click()]);
  await fp.goto(base() + "/checkout");
  await Promise.all([fp.waitForURL(/orderId=/), fp.getByRole("button", { name: "Continue to Shipping" }).click()]);
  assert.match(await fp.locator(".shipping-rates").innerText(), /North America: \$4\.00/);
  for (const [name, value] of [["firstName", "Ada"], ["lastName", "Lovelace"], ["address", "1 Main St"], ["city", "Portland"], ["state", "OR"], ["zipCode", "97201"]]) {
    await fp.fill(`input[name="${name}"]`, value);
  }
  await fp.locator('select[name="country"]').selectOption("US");
  await Promise.all([fp.waitForURL(/step=payment/), fp.getByRole("button", { name: "Continue to Payment" }).click()]);
  const summary = await fp.locator(".order-summary").innerText();
  assert.match(summary, /Shipping\s+\$4\.00/);
  assert.match(summary, /Total\s+\$16\.00/);
  await fp.locator('.checkout-pay input[name="paymentMethod"][value="musepay"]').check();
  await Promise.all([fp.waitForURL(/payment-success/), fp.locator(".pay-button").click()]);
  await Promise.all([fp.waitForURL(/\/orders\/[a-z2-7]{26}$/), fp.getByRole("link", { name: "View Order Details" }).click()]);
  walk.posterOrder = new URL(fp.url()).pathname.split("/").pop();
  assert.match(await fp.locator(".order-summary").innerText(), /Shipping\s+\$4\.00/);
  assert.equal(await balance(fp), "$14.00");

  // The creator: Processing, then Shipped with a tracking number.
  const card = page.locator(`.manage-card:has(a[href$="/orders/${walk.posterOrder}"])`);
  await page.goto(base() + "/manage/orders");
  assert.match(await card.innerText(), /Ship to Ada Lovelace, 1 Main St, Portland, OR 97201/);
  assert.match(await card.innerText(), /\$16\.00/);
  await Promise.all([page.waitForURL(/notice=/), card.getByRole("button", { name: "Mark Processing" }).click()]);
  await card.locator('input[name="trackingNumber"]').fill("WALK-123");
  await Promise.all([page.waitForURL(/notice=/), card.getByRole("button", { name: "Mark Shipped" }).click()]);
  assert.match(await page.locator(".added-alert").innerText(), /is now Shipped/);
  assert.match(await card.locator(".status").innerText(), /^Shipped$/);
  await shot(page, "2-shipped", 1280);
  await fp.goto(base() + "/orders/" + walk.posterOrder);
  assert.match(await fp.locator(".tracking").innerText(), /WALK-123/);
  assert.match(await fp.locator(".order-summary").innerText(), /Shipping\s+\$4\.00[^]*Total\s+\$16\.00/);
  await shot(fp, "2-fan-order", 1280);
});

test("3. a $10 wallet order: the creator refunds $3 with a reason, then the rest (390 px, JavaScript on)", async () => {
  const fp = walk.fan.page;
  await fp.goto(walk.setlist);
  await Promise.all([fp.waitForURL(/added=1/), fp.locator(".add-button").click()]);
  await fp.goto(base() + "/checkout");
  await Promise.all([fp.waitForURL(/orderId=/), fp.getByRole("button", { name: "Continue to Payment" }).click()]);
  assert.match(await fp.locator(".order-summary").innerText(), /Total\s+\$10\.00/);
  await fp.locator('.checkout-pay input[name="paymentMethod"][value="musepay"]').check();
  await Promise.all([fp.waitForURL(/payment-success/), fp.locator(".pay-button").click()]);
  await Promise.all([fp.waitForURL(/\/orders\/[a-z2-7]{26}$/), fp.getByRole("link", { name: "View Order Details" }).click()]);
  walk.setlistOrder = new URL(fp.url()).pathname.split("/").pop();
  assert.equal(await balance(fp), "$4.00");

  const page = walk.creator.page;
  await page.goto(base() + "/manage/orders");
  await Promise.all([page.waitForURL(new RegExp("/orders/" + walk.setlistOrder + "$")), page.locator(`a[href$="/orders/${walk.setlistOrder}"]`).click()]);
  await page.fill("#refund-amount", "3");
  await page.fill("#refund-reason", "Arrived late");
  await Promise.all([page.waitForURL(/notice=/), page.locator(".refund-form").getByRole("button", { name: "Refund" }).click()]);
  assert.match(await page.locator(".refund-info").innerText(), /Refunded so far: \$3\.00 of \$10\.00 \(Arrived late\)/);
  assert.match(await page.locator(".refund-form-section").innerText(), /Up to \$7\.00 can still be refunded/);
  await shot(page, "3-refunded-3", 390);
  assert.equal(await balance(fp), "$7.00");

  // The rest: the amount left empty.
  await page.fill("#refund-reason", "Sorry, sold out of signatures");
  await Promise.all([page.waitForURL(/notice=/), page.locator(".refund-form").getByRole("button", { name: "Refund" }).click()]);
  assert.match(await page.locator(".refund-info").innerText(), /Refunded/);
  assert.equal(await page.locator(".refund-form").count(), 0, "nothing left to refund");
  await shot(page, "3-refunded-all", 390);
  assert.equal(await balance(fp), "$14.00");
  const moves = await fp.locator(".movement-amounts strong").allInnerTexts();
  assert.deepEqual(moves.slice(0, 2), ["+$7.00", "+$3.00"]);
  await shot(fp, "3-fan-wallet", 1280);
});

test("4. the creator credits the fan $5 from the members screen (390 px, JavaScript on)", async () => {
  const page = walk.creator.page;
  await page.goto(base() + "/studio/members");
  const credit = page.locator('tr[data-member="walkfan"] .credit-fold');
  await credit.locator("summary").click();
  await credit.locator('input[name="amount"]').fill("5");
  await credit.locator('input[name="note"]').fill("Thanks for the patience");
  await Promise.all([page.waitForURL(/notice=credited/), credit.getByRole("button", { name: "Add credit" }).click()]);
  await shot(page, "4-credited", 390);
  const fp = walk.fan.page;
  assert.equal(await balance(fp), "$19.00");
  const first = fp.locator(".movement").first();
  assert.equal(await first.locator(".movement-amounts strong").innerText(), "+$5.00");
  assert.match(await first.innerText(), /Thanks for the patience/);
});

test("5. the creator exports the app and downloads the mailed zip (1280 px, JavaScript off)", async () => {
  const page = walk.desk.page;
  await page.goto(base() + "/studio/data");
  await Promise.all([page.waitForURL(/notice=export-requested/), page.getByRole("button", { name: "Mail me an export" }).click()]);
  assert.match(await page.locator(".added-alert").innerText(), /we mail you a link/);
  const link = await mailLink(env, creatorEmail, /^The export of /);
  const zip = await page.request.get(link);
  assert.equal(zip.status(), 200);
  assert.match(zip.headers()["content-disposition"], new RegExp(`filename="${app}-export-`));
  const bytes = await zip.body();
  assert.deepEqual([...bytes.subarray(0, 4)], [0x50, 0x4b, 0x03, 0x04], "a zip archive");
  await page.reload();
  assert.match(await page.locator(".export-list").innerText(), /ready/i);
  await shot(page, "5-export", 1280);
});

test("6. the creator makes a second app and deletes it by typing its name (390 px, JavaScript on)", async () => {
  const page = walk.creator.page;
  const spare = "nova-spare";
  await createApp(env, page, spare, "Nova Spare");
  await page.goto(env.server.base + "/apps/" + spare + "/studio");
  await Promise.all([page.waitForURL(/\/studio\/data$/), page.locator(".studio-nav a", { hasText: "Export & delete" }).click()]);
  await page.fill('input[name="confirm"]', spare);
  await shot(page, "6-delete", 390);
  await Promise.all([page.waitForURL(/\/apps\?deleted=/), page.getByRole("button", { name: "Delete this app" }).click()]);
  assert.match(await page.locator(".added-alert").innerText(), new RegExp(`${spare} was deleted`));
  assert.equal((await page.goto(env.server.base + "/apps/" + spare)).status(), 404);
  // The first app is untouched.
  assert.equal((await page.goto(base())).status(), 200);
  for (const who of [walk.creator, walk.desk, walk.fan]) {
    // The one refusal: the fan's wallet before following (its "Follow" page).
    assert.deepEqual(who.errors.filter((e) => !/^404 .*\/apps\/nova-spare$/.test(e) && !(who === walk.fan && /^403 .*\/apps\/nova-walk\/transactions$/.test(e))), []);
  }
});
