// The creator studio, issue 23's whole walk: a new user signs up, creates an
// app from /apps and sets it up (look, features, donation tiers, a monthly
// plan, a store item), with JavaScript on and off; a second new user joins,
// adds funds to their wallet by PayPal (the local fake), subscribes to the
// plan, buys the item and donates, and the creator sees each of them in the
// analytics (revenue by source, members by role, orders by status) and the
// CSV exports. Nothing goes through the CLI. Screenshots on a phone and a
// desktop.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startServer, startFakePayments, launchBrowser, watchErrors, screenshotDir, testImagePNG } from "./helpers.mjs";

// The new fan pays and donates at once: confirming an e-mail first is the
// accounts test's subject (scripts/browser/accounts.test.mjs).
const env = { server: null, browser: null, fake: null };
before(async () => {
  env.fake = await startFakePayments(["-client-id", "studio-client", "-client-secret", "studio-secret", "-webhook-id", "WH-STUDIO"]);
  env.server = await startServer({
    REQUIRE_VERIFIED_EMAIL: "false",
    PAYPAL_CLIENT_ID: "studio-client",
    PAYPAL_CLIENT_SECRET: "studio-secret",
    PAYPAL_API_BASE: env.fake.paypal,
    PAYPAL_WEBHOOK_ID: "WH-STUDIO",
  });
  env.browser = await launchBrowser();
});
after(async () => {
  await env.browser?.close();
  await env.server?.stop();
  env.fake?.stop();
});
const shots = process.env.STUDIO_SHOTS || screenshotDir;
mkdirSync(shots, { recursive: true });

const phone = { width: 390, height: 844 };
const desktop = { width: 1280, height: 900 };

async function signUp(page, email, username) {
  await page.goto(env.server.auth + "/authenticate/signup");
  await page.fill("#field-email", email);
  await page.fill("#field-username", username);
  await page.fill("#field-password", "a-long-password");
  // The sign-up says where the confirmation mail went, and goes on.
  await Promise.all([page.waitForURL(/\/authenticate\/welcome/), page.locator("button[type=submit]").click()]);
  assert.match(await page.locator("main").innerText(), new RegExp("Check your inbox[^]*" + email.replace(".", "\\.")));
  await Promise.all([page.waitForURL(env.server.base + "/apps"), page.getByRole("link", { name: "Continue" }).click()]);
}

// setUp runs the whole setup through the studio's plain forms; with or
// without JavaScript they post and come back with "Saved".
// publish opens the new app to everyone from its launch checklist (a new
// app starts unpublished: issue 43 item 1), so that fans can join it.
async function publish(page, app) {
  await page.goto(env.server.base + "/apps/" + app + "/studio/launch");
  await Promise.all([page.waitForURL(/notice=published/), page.getByRole("button", { name: "Publish", exact: true }).click()]);
}

async function setUp(page, app, label) {
  const studio = env.server.base + "/apps/" + app + "/studio";
  // A new app lands on its launch checklist; the profile is the studio's home.
  await page.goto(studio);
  await page.fill("#displayName", label + " Studio");
  await page.fill("#bio", "<p>Songs and <strong>sessions</strong>.</p><script>alert(1)</script>");
  // A bad language first: the form comes back with the reason and the input.
  await page.fill("#lang", "english");
  await Promise.all([page.waitForLoadState("load"), page.locator("button", { hasText: "Save profile" }).click()]);
  assert.match(await page.locator(".field-error").first().innerText(), /language code/);
  assert.equal(await page.inputValue("#displayName"), label + " Studio");
  await page.fill("#lang", "en");
  // The footer's tabs are a list: Store up one place saves the form with it.
  await Promise.all([page.waitForURL(/studio\?notice=saved/), page.getByRole("button", { name: "Move Store up" }).click()]);
  assert.deepEqual((await page.locator(".footer-order-list li span").allInnerTexts()).map((t) => t.trim()), ["Home", "Store", "Feed", "Events", "Chat"]);
  assert.equal(await page.inputValue("#lang"), "en");
  await Promise.all([page.waitForURL(/studio\?notice=saved/), page.getByRole("button", { name: "Save profile" }).click()]);
  await page.locator(".added-alert", { hasText: "Saved" }).waitFor();

  // Link-in-bio is on for a new app, its switches beside the links.
  assert.ok(await page.locator('input[name="linksEnabled"]').isChecked());
  assert.ok(await page.locator('input[name="showLinkInBio"]').isChecked());
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
  const newPlan = page.locator(".studio-card", { hasText: "New tier" });
  await newPlan.locator('input[name="name"]').fill("Supporters");
  // No price while on sale: refused, a tier cannot be published without one.
  await Promise.all([page.waitForLoadState("load"), newPlan.locator("button", { hasText: "Create tier" }).click()]);
  assert.match(await page.locator(".field-error").first().innerText(), /billing cycle/);
  const again = page.locator(".studio-card", { hasText: "New tier" });
  await again.locator('input[name="monthlyPrice"]').fill("5");
  await again.locator('textarea[name="benefits"]').fill("Early access\nMonthly live Q&A");
  await Promise.all([page.waitForURL(/plans\?notice=saved/), again.locator("button", { hasText: "Create tier" }).click()]);
  const card = page.locator('.plan-card[data-plan="Supporters"]');
  assert.match(await card.innerText(), /\$5\.00 \/ month/);
  assert.match(await card.innerText(), /On sale/);
}

// addItem: the creator adds a digital item to the app's store from the
// studio's "New item" link; it answers the item's address.
async function addItem(page, app, js) {
  await page.goto(env.server.base + "/apps/" + app + "/studio");
  await Promise.all([page.waitForURL(/\/store\/items\/new$/), page.locator(".studio-links a", { hasText: "New item" }).click()]);
  // Filled before hydration, the island would render its own empty fields
  // over what was typed (a loaded run did: Create Item then did nothing).
  if (js) await page.locator('form.item-form[data-hydrated="true"]').waitFor();
  await page.fill('input[name="name"]', "Live EP");
  await page.selectOption('select[name="type"]', "DIGITAL");
  await page.fill('input[name="price"]', "8");
  await page.uncheck('input[name="tracked"]');
  await Promise.all([page.waitForURL(/\/store\/items\/[a-z2-7]{26}$/), page.locator("button", { hasText: "Create Item" }).click()]);
  assert.match(await page.locator("h1").first().innerText(), /Live EP/);
  return new URL(page.url()).pathname;
}

// memberWalk: a second new user signs up from the app, adds $50 to their
// wallet by PayPal, subscribes to the monthly plan, buys the item and
// donates $12 - each through the pages a member uses, with JavaScript on or
// off.
async function memberWalk(app, planId, itemPath, { js, viewport, email, username, tag }) {
  const context = await env.browser.newContext({ viewport, javaScriptEnabled: js });
  const mp = await context.newPage();
  const base = env.server.base + "/apps/" + app;
  await mp.goto(env.server.auth + "/authenticate/signup?app=" + app);
  await mp.fill("#field-email", email);
  await mp.fill("#field-username", username);
  await mp.fill("#field-password", "a-long-password");
  await Promise.all([mp.waitForURL(/\/authenticate\/welcome/), mp.locator("button[type=submit]").click()]);
  await Promise.all([mp.waitForURL(base), mp.getByRole("link", { name: /^Continue/ }).click()]);

  // Add funds by PayPal: PayPal's approval page, back to the wallet.
  // The wallet is the store's: open to followers, so the member follows.
  await mp.goto(base + "/transactions");
  assert.match(await mp.locator("h1").first().innerText(), /Follow App to Access Store/);
  await Promise.all([mp.waitForNavigation(), mp.getByRole("button", { name: "Follow" }).click()]);
  await mp.goto(base + "/transactions");
  await mp.locator(".wallet-balance").waitFor();
  await mp.screenshot({ path: join(shots, `studio-${tag}-member-wallet-empty.png`), fullPage: true });
  if (js) await mp.locator('.add-funds-form[data-hydrated="true"]').waitFor();
  await mp.locator('.add-funds-form input[name="amount"][value="5000"]').check();
  if (!js) await mp.locator('.add-funds-form input[name="method"][value="paypal"]').check();
  await Promise.all([mp.waitForURL((u) => u.toString().startsWith(env.fake.paypal + "/checkoutnow")), mp.locator(".add-funds-button").click()]);
  await Promise.all([mp.waitForURL(/\/transactions\?added=5000/), mp.getByRole("button", { name: "Pay Now" }).click()]);
  assert.match(await mp.locator(".wallet-balance").innerText(), /\$50\.00/);

  // The monthly plan, paid from the wallet.
  await mp.goto(base + "/checkout/plan/" + planId);
  await Promise.all([mp.waitForLoadState("load"), mp.locator("button", { hasText: "Pay $5.00 with wallet" }).click()]);
  await mp.screenshot({ path: join(shots, `studio-${tag}-member-subscribed.png`), fullPage: true });

  // The item: add to cart, review, pay with the wallet.
  await mp.goto(env.server.base + itemPath);
  if (js) {
    await mp.locator('.add-to-cart[data-hydrated="true"]').waitFor();
    await mp.locator(".add-button").click();
    await mp.locator(".added-alert", { hasText: "Added" }).waitFor();
  } else {
    await Promise.all([mp.waitForURL(/added=1/), mp.locator(".add-button").click()]);
  }
  await mp.goto(base + "/checkout");
  await Promise.all([mp.waitForURL(/orderId=/), mp.getByRole("button", { name: "Continue to Payment" }).click()]);
  if (js) await mp.locator('.checkout-pay[data-hydrated="true"]').waitFor();
  await mp.locator('.checkout-pay input[name="paymentMethod"][value="musepay"]').check();
  await Promise.all([mp.waitForURL(/payment-success/), mp.locator(".pay-button").click()]);
  await mp.getByRole("heading", { name: "Payment Successful!" }).waitFor();

  // A donation of $12 from the wallet.
  await mp.goto(base + "/donate");
  if (js) await mp.locator('.donate-page-form[data-hydrated="true"]').waitFor();
  await mp.fill('.donate-form input[name="amount"]', "12");
  await Promise.all([mp.waitForURL(/\/donate/), mp.locator(".donate-form button[type=submit]").click()]);
  await mp.locator(".notice", { hasText: "Thank you" }).waitFor();
  await mp.goto(base + "/transactions");
  // $50 in, $5 + $8 + $12 out.
  assert.match(await mp.locator(".wallet-balance").innerText(), /\$25\.00/);
  await mp.screenshot({ path: join(shots, `studio-${tag}-member-wallet.png`), fullPage: true });
  await context.close();
}

// seesTheMember: the creator's members list, analytics and exports show the
// member's subscription, purchase and donation.
async function seesTheMember(page, app, username, email) {
  const studio = env.server.base + "/apps/" + app + "/studio";
  await page.goto(studio + "/members");
  const row = page.locator(`tr[data-member="${username}"]`);
  assert.match(await row.innerText(), /Subscriber/);
  assert.match(await row.innerText(), /Supporters \(active\)/);
  assert.match(await row.innerText(), /Bronze/);
  await page.goto(studio + "/analytics?bucket=month");
  const cells = async (loc) => (await loc.locator("td").allInnerTexts()).map((t) => t.trim());
  // Gross - refunds = net, and the net by source: the $8 item, the $5
  // plan, the $12 donation.
  assert.deepEqual(await cells(page.locator(".revenue-table tr.total")), ["Total", "$25.00", "$0.00", "$25.00"]);
  assert.deepEqual(await cells(page.locator(".revenue-sources tbody tr")), ["Orders", "$8.00", "Memberships", "$5.00", "Donations", "$12.00", "Tickets", "$0.00", "Total", "$25.00"]);
  assert.match(await page.locator(".big-number").first().innerText(), /\$25\.00/);
  // Members this month: the creator and one subscriber, both new.
  const months = page.locator(".members-over-time tbody tr");
  const month = new Date().toISOString().slice(0, 7);
  assert.deepEqual(await cells(months.last()), [month, "0", "1", "0", "0", "1", "2", "0"]);
  // Orders by status: the plan's order and the item's, both paid.
  const statuses = {};
  for (const tr of await page.locator(".orders-by-status tbody tr").all()) {
    const [label, n] = await cells(tr);
    statuses[label] = n;
  }
  assert.equal(statuses["Payment Confirmed"], "2", JSON.stringify(statuses));
  assert.equal(Object.values(statuses).reduce((a, b) => a + Number(b), 0), 2, JSON.stringify(statuses));
  assert.equal(await page.locator(".chart svg").count() >= 2, true);
  // The CSV exports hold them.
  const csv = async (name) => (await page.request.get(studio + "/export/" + name + ".csv")).text();
  assert.match(await csv("donations"), new RegExp(`${username},${email.replace(".", "\\.")},12\\.00,USD,PAID`));
  const orders = await csv("orders");
  assert.equal(orders.trim().split("\n").filter((l) => l.includes(`,paid,${username},`) || l.includes(`,PAID,${username},`)).length, 2, orders);
  assert.match(orders, /,8\.00,0\.00,USD,musepay/);
  assert.match(await csv("members"), new RegExp(`${username},.*,SUBSCRIBER,.*,Supporters,ACTIVE,Bronze,12\\.00`));
}

async function planIdOf(page, app) {
  await page.goto(env.server.base + "/apps/" + app + "/studio/plans");
  return (await page.locator('.plan-card[data-plan="Supporters"] form.plan-form').first().getAttribute("action")).split("/").pop();
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

test("a new user creates an app and sets it up with JavaScript, and sees a member subscribe, buy and donate", async () => {
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
  await Promise.all([page.waitForURL(/\/apps\/luna-live\/studio\/launch\?notice=created/), page.locator("button", { hasText: "Create app" }).click()]);
  assert.match(await page.locator(".added-alert").innerText(), /Your app is ready/);

  await setUp(page, "luna-live", "Luna");
  await publish(page, "luna-live");
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

  // The creator adds a store item; a new member, on a desktop with
  // JavaScript, pays for all three, and the analytics show it.
  const itemPath = await addItem(page, "luna-live", true);
  const planId = await planIdOf(page, "luna-live");
  await memberWalk("luna-live", planId, itemPath, { js: true, viewport: desktop, email: "jsfan@studio.test", username: "jsfan", tag: "js" });
  await seesTheMember(page, "luna-live", "jsfan", "jsfan@studio.test");
  await screenshots(page, "luna-live", "js");
  await context.close();
});

test("without JavaScript: create (a taken name is refused beside the field), set up, and see a member subscribe, buy and donate", async () => {
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
  await Promise.all([page.waitForURL(/\/apps\/plain-app\/studio\/launch\?notice=created/), page.locator("button", { hasText: "Create app" }).click()]);
  await setUp(page, "plain-app", "Plain");
  await publish(page, "plain-app");

  // The creator adds a store item; a new member, on a phone without
  // JavaScript, pays for all three, and the analytics show it.
  const itemPath = await addItem(page, "plain-app", false);
  const planId = await planIdOf(page, "plain-app");
  await memberWalk("plain-app", planId, itemPath, { js: false, viewport: phone, email: "fan@studio.test", username: "plainfan", tag: "nojs" });
  await seesTheMember(page, "plain-app", "plainfan", "fan@studio.test");

  // The creator promotes the member with the members screen's plain form:
  // the audit log says so, and the analytics count them as a moderator
  // from now on (the role history), not as a churned subscriber.
  await page.goto(env.server.base + "/apps/plain-app/studio/members");
  const fanRow = page.locator('tr[data-member="plainfan"]');
  await fanRow.locator('select[name="role"]').selectOption("MODERATOR");
  await Promise.all([page.waitForURL(/\/studio\/members\?.*notice=/), fanRow.locator("button", { hasText: "Change" }).click()]);
  assert.match(await page.locator('tr[data-member="plainfan"]').innerText(), /Moderator/);
  // The creator credits the member $5 with a note, from the same screen
  // without JavaScript; the form sent again (a reload, a double tap)
  // credits nothing more; the welcome credit is set there too.
  await page.goto(env.server.base + "/apps/plain-app/studio/members");
  const credit = page.locator('tr[data-member="plainfan"] .credit-fold');
  await credit.locator("summary").click();
  await credit.locator('input[name="amount"]').fill("5");
  await credit.locator('input[name="note"]').fill("Thanks for joining early");
  const key = await credit.locator('input[name="key"]').inputValue();
  const action = await credit.locator("form").getAttribute("action");
  await Promise.all([page.waitForURL(/notice=credited/), credit.getByRole("button", { name: "Add credit" }).click()]);
  await page.screenshot({ path: join(shots, "studio-credit-nojs-390.png"), fullPage: true });
  const again = await page.request.post(env.server.base + action, { form: { amount: "5", note: "Thanks for joining early", key }, maxRedirects: 0 });
  assert.equal(again.status(), 303);
  assert.match(again.headers()["location"], /notice=credit-replayed/);
  await page.fill("#welcomeCredit", "2.50");
  await Promise.all([page.waitForURL(/notice=welcome-saved/), page.getByRole("button", { name: "Save welcome credit" }).click()]);
  assert.equal(await page.inputValue("#welcomeCredit"), "2.50");
  await page.goto(env.server.base + "/apps/plain-app/studio/moderation");
  assert.equal((await page.locator("main").innerText()).match(/WALLET_CREDIT/g)?.length, 1, "one credit in the audit log");
  assert.match(await page.locator("main").innerText(), /\$5\.00 to the wallet: Thanks for joining early/);
  assert.match(await page.locator("main").innerText(), /SUBSCRIBER → MODERATOR/);
  await page.goto(env.server.base + "/apps/plain-app/studio/analytics?bucket=month");
  const thisMonth = (await page.locator(".members-over-time tbody tr").last().locator("td").allInnerTexts()).map((t) => t.trim());
  assert.deepEqual(thisMonth.slice(1), ["0", "0", "1", "0", "1", "2", "0"]);
  await screenshots(page, "plain-app", "nojs");
  await context.close();
});
