import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { useServerAndBrowser, signIn, testImagePNG } from "./helpers.mjs";

// Every action works with JavaScript off (issue 27 item 4): donate, sign
// out, like, comment, follow and unfollow, profile picture, new post, new
// story, new store item and new event are plain forms the islands enhance.
const env = useServerAndBrowser();
const shots = "/tmp/shots-member";
mkdirSync(shots, { recursive: true });
const NOJS = { javaScriptEnabled: false };
const DESKTOP = { javaScriptEnabled: false, viewport: { width: 1280, height: 900 } };

// A PNG made by a browser that has JavaScript (the test's own page).
let png;
async function image() {
  if (!png) {
    const page = await env.browser.newPage();
    png = await testImagePNG(page);
    await page.close();
  }
  return { name: "photo.png", mimeType: "image/png", buffer: png };
}

// submit clicks a form's button and waits for the page it leads to.
async function submit(page, button, url) {
  await Promise.all([page.waitForURL(url), button.click()]);
}

test("without JavaScript a member donates: an amount fills the input, Send pays and the balance drops", async () => {
  const { context, page } = await signIn(env, "follower@demo.test", "demo-password", NOJS);
  await page.goto(env.server.base + "/apps/demo/donate");
  const balance = async () => Number(/Wallet balance: \$([\d,.]+)/.exec(await page.locator(".donate-page .meta").first().innerText())[1].replace(",", ""));
  const before = await balance();
  const quick = page.locator(".amounts a").first();
  const label = (await quick.innerText()).trim();
  await submit(page, quick, /\/donate\?amount=/);
  const amount = Number(await page.locator('input[name="amount"]').inputValue());
  assert.ok(amount > 0 && label.includes(String(Math.trunc(amount))), "the amount link fills the input: " + label + " -> " + amount);
  const send = page.locator("button.donate-send");
  assert.equal(await send.isDisabled(), false, "Send works without JavaScript");
  await page.screenshot({ path: join(shots, "donate-nojs-390.png"), fullPage: true });
  await submit(page, send, /\/donate\?thanks=1$/);
  assert.match(await page.locator(".notice").innerText(), /Thank you for your support!/);
  assert.equal(Math.round((before - (await balance())) * 100), Math.round(amount * 100), "the new balance is shown");
  await context.close();
});

test("without JavaScript a visitor follows and unfollows from the profile, then signs out", async () => {
  const { context, page } = await signIn(env, "member@demo.test", "demo-password", NOJS);
  await page.goto(env.server.base + "/apps/demo/profile");
  await submit(page, page.locator(".profile-actions button", { hasText: "Follow" }), /\/apps\/demo\/profile$/);
  assert.match(await page.locator(".profile-actions .meta").innerText(), /Role in this app: Follower/);
  await page.screenshot({ path: join(shots, "profile-nojs-390.png"), fullPage: true });
  await submit(page, page.locator(".profile-actions button", { hasText: "Unfollow" }), /\/apps\/demo\/profile$/);
  assert.match(await page.locator(".profile-actions .meta").innerText(), /don't follow/);
  await submit(page, page.locator(".profile-actions button", { hasText: "Sign Out" }), /\/authenticate\/signin\?app=demo$/);
  await page.goto(env.server.base + "/apps/demo/profile");
  assert.match(await page.locator("main").innerText(), /Sign in to follow/);
  await context.close();
});

test("without JavaScript a member changes the profile picture", async () => {
  const { context, page } = await signIn(env, "aria@demo.test", "demo-password", NOJS);
  await page.goto(env.server.base + "/apps/demo/profile");
  const src = async () => ((await page.locator(".profile-picture img").count()) ? page.locator(".profile-picture img").getAttribute("src") : "");
  const before = await src();
  await page.setInputFiles('.profile-picture input[type="file"]', await image());
  await submit(page, page.locator(".profile-picture button", { hasText: "Upload" }), /\/profile\?picture=ok$/);
  assert.match(await page.locator(".toast").innerText(), /Profile picture uploaded successfully!/);
  const after = await src();
  assert.ok(after && after !== before, "the new picture shows: " + before + " -> " + after);
  await page.screenshot({ path: join(shots, "profile-picture-nojs-390.png"), fullPage: true });
  await context.close();
});

test("without JavaScript a subscriber posts with a photo, adds a story; a follower likes and comments", async () => {
  const sub = await signIn(env, "subscriber@demo.test", "demo-password", NOJS);
  // Short: a media card shows the first 26 characters (SPEC.md section 9).
  const text = "JS-off post " + (Date.now() % 100000);
  await sub.page.goto(env.server.base + "/apps/demo/create-post");
  await sub.page.fill('textarea[name="content"]', text);
  await sub.page.setInputFiles('input[name="media"]', await image());
  await sub.page.screenshot({ path: join(shots, "create-post-nojs-390.png"), fullPage: true });
  await submit(sub.page, sub.page.locator("button", { hasText: "Share" }), /\/apps\/demo\/community$/);
  await sub.page.locator("main", { hasText: text }).waitFor();
  // A refusal comes back on the form with SPEC's words.
  await sub.page.goto(env.server.base + "/apps/demo/create-post");
  await sub.page.locator("button", { hasText: "Share" }).click();
  await sub.page.waitForLoadState();
  assert.match(await sub.page.locator(".inline-error").innerText(), /Please add some content or media to your post/);

  await sub.page.goto(env.server.base + "/apps/demo/create-story");
  await sub.page.setInputFiles('input[name="media"]', await image());
  await sub.page.fill('input[name="content"]', "story without script");
  await submit(sub.page, sub.page.locator("button", { hasText: "Share to Story" }), /\/apps\/demo\/community$/);
  await sub.context.close();

  const { context, page } = await signIn(env, "follower@demo.test", "demo-password", NOJS);
  await page.goto(env.server.base + "/apps/demo/community");
  await page.screenshot({ path: join(shots, "community-nojs-390.png"), fullPage: false });
  await submit(page, page.locator("a", { hasText: text }).first(), /\/posts\/[a-z2-7]{26}$/);
  const postUrl = page.url();
  assert.equal(await page.locator(".post-detail img").count() >= 1, true, "the photo is on the post");
  assert.equal(await page.locator(".like-count").innerText(), "0");
  await submit(page, page.locator(".like-button"), postUrl);
  assert.equal(await page.locator(".like-count").innerText(), "1");
  await page.fill("#comment-text", "Commented with JavaScript off");
  await submit(page, page.locator(".comment-form button", { hasText: "Post" }), /#comments$/);
  assert.match(await page.locator(".comment-list").innerText(), /Commented with JavaScript off/);
  await page.screenshot({ path: join(shots, "post-nojs-390.png"), fullPage: true });
  await context.close();
});

test("without JavaScript the creator adds a store item with an image and sizes, and an event", async () => {
  const { context, page } = await signIn(env, "creator@demo.test", "demo-password", DESKTOP);
  await page.goto(env.server.base + "/apps/demo/store/items/new");
  await page.fill('input[name="name"]', "No-Script Tee");
  await page.fill('textarea[name="description"]', "Added with JavaScript off");
  await page.fill('input[name="price"]', "19.99");
  await page.setInputFiles('input[name="images"]', await image());
  const names = page.locator('input[name="variantName"]');
  const values = page.locator('input[name="variantValue"]');
  await names.nth(0).fill("Size");
  await values.nth(0).fill("M");
  await names.nth(1).fill("Size");
  await values.nth(1).fill("L");
  await page.screenshot({ path: join(shots, "item-new-nojs-1280.png"), fullPage: true });
  await submit(page, page.locator("button", { hasText: "Create Item" }), /\/store\/items\/[a-z2-7]{26}$/);
  assert.match(await page.locator("h1").first().innerText(), /No-Script Tee/);
  const body = await page.locator("main").innerText();
  assert.match(body, /\$19\.99/);
  assert.match(body, /\bM\b/);
  assert.match(body, /\bL\b/);

  const name = "No-Script Listening Party";
  await page.goto(env.server.base + "/apps/demo/create-event");
  await page.fill('input[name="name"]', name);
  const endDate = await page.locator('input[name="endDate"]').inputValue();
  await page.fill('input[name="startDate"]', endDate);
  await submit(page, page.locator("button", { hasText: "Create Event" }), /\/events\/[a-z2-7]{26}$/);
  assert.equal(await page.locator(".event-details h1").innerText(), name);
  await context.close();
});
