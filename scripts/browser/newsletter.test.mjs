// The studio's newsletter screen (issue 44): the creator sets how the app
// mails its posts, saves a draft to be mailed, sends it to themself as a
// test through a real SMTP server (mailpit), and reads the screen on a
// phone without JavaScript and on a desktop with it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startServer, launchBrowser, startMailpit, signIn, watchErrors, screenshotDir } from "./helpers.mjs";

const env = { server: null, browser: null, mail: null };
const shots = process.env.SHOTS_DIR || screenshotDir;
mkdirSync(shots, { recursive: true });

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

test("the creator sets up the newsletter and mails a draft to themself, without JavaScript on a phone", async () => {
  const { context, page } = await signIn(env, "creator@demo.test", "demo-password", { javaScriptEnabled: false });
  const errors = watchErrors(page);
  const shot = (name) => page.screenshot({ path: join(shots, "newsletter-" + name + "-390x844-nojs.png"), fullPage: true });

  await page.goto(env.server.base + "/apps/demo/studio");
  await Promise.all([page.waitForURL(/\/studio\/newsletter$/), page.locator(".studio-nav a", { hasText: "Newsletter" }).click()]);

  // A refused time zone comes back named, with what was typed.
  await page.fill('[name="senderName"]', "Luna's letters");
  await page.fill('[name="replyTo"]', "luna@creator.test");
  await page.fill('[name="timeZone"]', "Mars/Olympus");
  await page.getByRole("button", { name: "Save" }).click();
  assert.match(await page.locator(".field-error").first().innerText(), /Choose a time zone/);
  assert.equal(await page.locator('[name="senderName"]').inputValue(), "Luna's letters");
  await shot("refused");
  await page.fill('[name="timeZone"]', "Europe/Lisbon");
  await page.check('[name="defaultOn"]');
  await page.selectOption('[name="digestDay"]', "5");
  await page.selectOption('[name="digestHour"]', "18");
  await Promise.all([page.waitForURL(/\/studio\/newsletter\?notice=saved$/), page.getByRole("button", { name: "Save" }).click()]);
  assert.equal(await page.locator('[name="replyTo"]').inputValue(), "luna@creator.test");
  assert.equal(await page.locator('[name="digestDay"]').inputValue(), "5");
  assert.ok(await page.locator('[name="defaultOn"]').isChecked());

  // The composer starts with "Send by e-mail" ticked; the post is saved as a draft.
  await page.goto(env.server.base + "/apps/demo/create-post");
  assert.ok(await page.locator('[name="newsletter"]').isChecked(), "the newsletter starts on");
  await page.fill('[name="content"]', "Letter draft for the test mail");
  await page.check('[name="when"][value="draft"]');
  await Promise.all([page.waitForLoadState("load"), page.locator('form button[type="submit"]').last().click()]);

  await page.goto(env.server.base + "/apps/demo/studio/newsletter");
  const row = page.locator(".newsletter-post", { hasText: "Letter draft for the test mail" });
  assert.match(await row.innerText(), /Draft · will be mailed/);
  await Promise.all([page.waitForURL(/notice=test-sent/), row.getByRole("button", { name: "Send a test to creator@demo.test" }).click()]);
  assert.match(await page.locator(".studio").innerText(), /Test mail on its way/);

  const mail = await env.mail.waitFor("creator@demo.test");
  assert.match(mail.Subject, /^\[Test\] /);
  assert.match(mail.Text, /Letter draft for the test mail/);
  assert.equal(mail.From.Name, "Luna's letters");
  const others = await env.mail.list("subscriber@demo.test");
  assert.equal(others.length, 0, "no member got the draft");

  const { scroll, inner } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
  assert.ok(scroll <= inner, `fits the phone: ${scroll} > ${inner}`);
  await shot("screen");
  // The refused form answered 400, as it should.
  assert.deepEqual(errors.filter((e) => !e.startsWith("400 ")), []);
  await context.close();
});

test("the newsletter screen with JavaScript on a desktop", async () => {
  const { context, page } = await signIn(env, "admin@demo.test", "demo-password", { viewport: { width: 1280, height: 900 } });
  const errors = watchErrors(page);
  await page.goto(env.server.base + "/apps/demo/studio/newsletter");
  await page.getByRole("heading", { name: "Newsletter settings" }).waitFor();
  assert.equal(await page.locator('.studio-nav a[aria-current="page"]').innerText(), "Newsletter");
  // An admin's test goes to the admin's own address.
  assert.ok((await page.locator(".newsletter-post button").count()) > 0);
  assert.match(await page.locator(".newsletter-post button").first().innerText(), /admin@demo\.test/);
  await page.screenshot({ path: join(shots, "newsletter-screen-1280x900.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await context.close();
});
