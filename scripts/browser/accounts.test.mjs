// Accounts and e-mail on a phone (issue 25): password reset through a real
// mail, sign-up with verification, a purchase's receipt and the shipped
// mail, all read from a real SMTP server (mailpit).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { startServer, launchBrowser, startMailpit, signIn, watchErrors, screenshotDir, root } from "./helpers.mjs";

const env = { server: null, browser: null, mail: null };
const shots = process.env.SHOTS_DIR || screenshotDir;
mkdirSync(shots, { recursive: true });
const shot = (page, name) => page.screenshot({ path: join(shots, "accounts-" + name + "-390x844.png"), fullPage: true });

before(async () => {
  env.mail = await startMailpit();
  env.server = await startServer({ SMTP_URL: env.mail.smtpUrl, MAIL_FROM: "Demo Ops <mail@marquee.test>" });
  env.browser = await launchBrowser();
});
after(async () => {
  await env.browser?.close();
  await env.server?.stop();
  env.mail?.stop();
});

const linkIn = (text) => {
  const m = /(http:\/\/\S+token=[A-Za-z0-9_-]+\S*)/.exec(text);
  assert.ok(m, "a link with a token in:\n" + text);
  return m[1];
};

test("forgot password: the mail's link sets a new password, signs in and signs every other session out", async () => {
  // Another device stays signed in until the reset.
  const other = await signIn(env, "subscriber@demo.test");
  const me = async (page) => (await page.request.get(env.server.base + "/api/auth/me")).status();
  assert.equal(await me(other.page), 200);

  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.auth + "/authenticate/signin?app=demo");
  await Promise.all([page.waitForURL(/\/authenticate\/forgot/), page.getByRole("link", { name: "Forgot password?" }).click()]);
  await page.fill('[name="email"]', "subscriber@demo.test");
  await shot(page, "1-forgot");
  await Promise.all([page.waitForLoadState("load"), page.getByRole("button", { name: "Send reset link" }).click()]);
  await page.getByRole("heading", { name: "Check your inbox" }).waitFor();
  await shot(page, "2-sent");

  const mail = await env.mail.waitFor("subscriber@demo.test");
  assert.equal(mail.Subject, "Reset your password");
  assert.equal(mail.From.Name, "Demo Studio");
  assert.equal(mail.From.Address, "mail@marquee.test");
  assert.match(mail.HTML, /Choose a new password/);
  await page.goto(linkIn(mail.Text));
  await page.fill('[name="password"]', "a-brand-new-password");
  await shot(page, "3-new-password");
  await Promise.all([page.waitForURL((u) => u.toString().startsWith(env.server.base + "/apps/demo")), page.getByRole("button", { name: "Set new password" }).click()]);
  assert.equal(await me(page), 200, "signed in with the new password");
  assert.equal(await me(other.page), 401, "the other session is gone");

  // The link worked once; the new password signs in.
  await page.goto(linkIn(mail.Text));
  await page.getByRole("heading", { name: "This link has expired" }).waitFor();
  const again = await signIn(env, "subscriber@demo.test", "a-brand-new-password");
  assert.equal(await me(again.page), 200);
  assert.deepEqual(errors.filter((e) => !e.startsWith("400 ")), []);
  await Promise.all([context.close(), other.context.close(), again.context.close()]);
});

test("sign-up mails a confirmation; once confirmed the member buys, and receipt and shipped mails carry the totals and tracking number", async () => {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await page.goto(env.server.auth + "/authenticate/signup?app=demo");
  await page.fill('[name="email"]', "newfan@demo.test");
  await page.fill('[name="username"]', "newfan");
  await page.fill('[name="password"]', "newfan-password");
  // The page after the form says where the confirmation mail went.
  await Promise.all([page.waitForURL(/\/authenticate\/welcome\?app=demo$/), page.locator('form button[type="submit"]').click()]);
  const sent = await page.locator("main").innerText();
  assert.match(sent, /Check your inbox/);
  assert.match(sent, /newfan@demo\.test/);
  assert.match(sent, /spam/);
  await page.screenshot({ path: join(shots, "signup-mail-sent-390.png"), fullPage: true });
  await Promise.all([page.waitForURL(env.server.base + "/apps/demo"), page.getByRole("link", { name: /^Continue to / }).click()]);

  const landing = await (await page.request.get(env.server.base + "/api/app/demo/landing")).json();
  const appId = landing.data.id;
  const storeId = landing.data.store.id;
  assert.equal((await page.request.post(env.server.base + "/api/notifications/follow/" + appId)).status(), 200, "following needs no confirmed address");
  execFileSync(join(root, "bin", "marquee"), ["wallet", "credit", "demo", "newfan@demo.test", "50"], { env: env.server.env, cwd: root, stdio: "pipe" });

  // Unconfirmed: paying is refused with the reason.
  const items = await (await page.request.get(env.server.base + "/api/store/" + storeId + "/items?search=pin")).json();
  const pin = items.data.items.find((i) => i.type === "PHYSICAL");
  assert.ok(pin, "a physical item");
  assert.equal((await page.request.post(env.server.base + "/api/store/" + storeId + "/cart/items", { data: { storeItemId: pin.id, quantity: 2 } })).status(), 200);
  const order = await (await page.request.post(env.server.base + "/api/store/" + storeId + "/orders/checkout", {
    data: { shippingAddress: { firstName: "Ada", lastName: "Lovelace", address: "1 Main St", city: "Portland", state: "OR", zipCode: "97201" } },
  })).json();
  const refused = await page.request.post(env.server.base + "/api/store/" + storeId + "/musepay/process", { data: { orderId: order.data.id } });
  assert.equal(refused.status(), 403);
  assert.match((await refused.json()).message, /confirm your email/);

  const confirm = await env.mail.waitFor("newfan@demo.test");
  assert.equal(confirm.Subject, "Confirm your e-mail address");
  await page.goto(linkIn(confirm.Text));
  await page.getByRole("heading", { name: "Address confirmed" }).waitFor();
  await shot(page, "4-confirmed");

  // Confirmed: the member pays through the checkout page.
  await page.goto(env.server.base + "/apps/demo/checkout?orderId=" + order.data.id + "&step=payment");
  await page.locator('.checkout-pay[data-hydrated="true"]').waitFor();
  await Promise.all([page.waitForURL(/payment-success/), page.locator(".pay-button").click()]);
  await page.getByRole("heading", { name: "Payment Successful!" }).waitFor();

  const total = "$" + ((pin.price * 2) / 100).toFixed(2);
  const receipt = await env.mail.waitFor("newfan@demo.test", 2).catch((e) => {
    console.log(env.server.logs(), env.server.env.DATABASE_URL);
    throw e;
  });
  assert.equal(receipt.Subject, "Your receipt for order " + order.data.orderNumber);
  assert.match(receipt.Text, new RegExp("× 2: \\" + total));
  assert.match(receipt.Text, new RegExp("Total: \\" + total));
  assert.match(receipt.Text, /Ada Lovelace, 1 Main St, Portland OR 97201/);
  assert.doesNotMatch(receipt.Raw, /List-Unsubscribe/, "a receipt is transactional");
  const mailPage = await context.newPage();
  await mailPage.setContent(receipt.HTML);
  await shot(mailPage, "5-receipt-mail");

  // The creator ships it with a tracking number; the buyer is mailed it.
  const creator = await signIn(env, "creator@demo.test");
  const cpage = creator.page;
  for (const [to, extra] of [["PROCESSING", {}], ["SHIPPED", { trackingNumber: "1Z999AA10123456784" }]]) {
    const r = await cpage.request.put(env.server.base + "/api/store/" + storeId + "/orders/" + order.data.id + "/status", { data: { status: to, ...extra } });
    assert.equal(r.status(), 200, to);
  }
  const shipped = await env.mail.waitFor("newfan@demo.test", 3);
  assert.equal(shipped.Subject, "Order " + order.data.orderNumber + " has shipped");
  assert.match(shipped.Text, /Tracking number: 1Z999AA10123456784/);
  await mailPage.setContent(shipped.HTML);
  await shot(mailPage, "6-shipped-mail");
  // The in-app notification says the same.
  await page.goto(env.server.base + "/apps/demo/notifications");
  assert.match(await page.locator("main").innerText(), /has shipped\. Tracking number: 1Z999AA10123456784/);
  await shot(page, "7-notifications");
  await Promise.all([context.close(), creator.context.close()]);
});

test("account settings: the data export arrives as a mailed link; deleting the account signs out and keeps no name", async () => {
  const { context, page } = await signIn(env, "member@demo.test");
  const errors = watchErrors(page);
  await page.goto(env.server.base + "/apps/demo/profile");
  await Promise.all([page.waitForURL(/\/authenticate\/account/), page.getByRole("link", { name: "Account settings" }).click()]);
  await page.getByRole("heading", { name: "Account settings" }).waitFor();
  assert.match(await page.locator(".session-list").innerText(), /This device/);
  await shot(page, "8-account");
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: join(shots, "accounts-8-account-1280x900.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });

  await Promise.all([page.waitForURL(/notice=export/), page.getByRole("button", { name: "Download my data" }).click()]);
  assert.match(await page.locator(".form-notice").innerText(), /preparing your data/);
  const ready = await env.mail.waitFor("member@demo.test");
  assert.equal(ready.Subject, "Your data is ready");
  const download = await page.request.get(linkIn(ready.Text));
  assert.equal(download.status(), 200);
  const archive = await download.json();
  assert.equal(archive.profile.email, "member@demo.test");
  assert.ok(Array.isArray(archive.orders) && Array.isArray(archive.postsAndComments));

  await page.fill("#account-currentPassword-delete", "demo-password");
  await shot(page, "9-delete");
  await Promise.all([page.waitForLoadState("load"), page.getByRole("button", { name: "Delete my account" }).click()]);
  await page.getByRole("heading", { name: "Your account was deleted" }).waitFor();
  await shot(page, "10-deleted");
  assert.equal((await page.request.get(env.server.base + "/api/auth/me")).status(), 401);
  await page.goto(env.server.auth + "/authenticate/signin?app=demo");
  await page.fill('[name="email"]', "member@demo.test");
  await page.fill('[name="password"]', "demo-password");
  await Promise.all([page.waitForLoadState("load"), page.locator('form button[type="submit"]').click()]);
  assert.match(await page.locator(".form-error").innerText(), /Invalid email, username or password/);
  assert.deepEqual(errors.filter((e) => !/^40[01] /.test(e)), []);
  await context.close();
});
