// Content for each tier in the browser (issue 40 item 2): the creator locks
// a post to a tier from the composer (JavaScript on, a phone) and another
// to followers with the plain form (JavaScript off); visitors, followers
// and lower tiers see the teaser, a lock badge and the way to unlock, never
// the text; those who may read it do.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { useServerAndBrowser, signIn, watchErrors, screenshotDir } from "./helpers.mjs";

const env = useServerAndBrowser();
const shots = process.env.SHOTS_DIR || screenshotDir;
mkdirSync(shots, { recursive: true });

async function visitor(options = {}) {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 }, ...options });
  return { context, page: await context.newPage() };
}

test("a post for one tier and above: teaser and Join for the rest, the text for its readers", async () => {
  const creator = await signIn(env, "creator@demo.test");
  const errors = watchErrors(creator.page);
  await creator.page.goto(env.server.base + "/apps/demo/create-post");
  await creator.page.waitForSelector('form[data-hydrated="true"]');
  await creator.page.fill("#post-content", "Quetzal-harbour tier notes");
  await creator.page.selectOption('[data-testid="post-access"]', { label: "Backstage Pass and above" });
  await creator.page.fill("#post-teaser", "Backstage notes for the pass holders");
  await creator.page.screenshot({ path: join(shots, "access-composer-390x844.png"), fullPage: true });
  await Promise.all([creator.page.waitForURL(/\/apps\/demo\/community$/), creator.page.locator('form button[type="submit"]').last().click()]);
  assert.match(await creator.page.locator(".feed-card").first().innerText(), /Quetzal-harbour tier notes/);
  assert.deepEqual(errors, []);
  const postHref = await creator.page.locator(".feed-card a").first().getAttribute("href");

  for (const who of ["visitor", "subscriber@demo.test"]) {
    const { context, page } = who === "visitor" ? await visitor() : await signIn(env, who);
    await page.goto(env.server.base + "/apps/demo/community");
    const card = page.locator(".feed-card", { hasText: "Backstage notes for the pass holders" });
    assert.equal(await card.locator('[data-testid="locked-badge"]').innerText(), "🔒 Backstage Pass");
    assert.doesNotMatch(await page.content(), /Quetzal-harbour/, who + " sees the locked text in the feed");
    await page.goto(env.server.base + postHref);
    const unlock = page.getByRole("link", { name: "Join Backstage Pass to unlock" });
    assert.equal(await unlock.getAttribute("href"), "/apps/demo/membership");
    assert.doesNotMatch(await page.content(), /Quetzal-harbour/, who + " sees the locked text on the post page");
    await page.screenshot({ path: join(shots, "access-locked-" + (who === "visitor" ? "visitor" : "member") + "-390x844.png"), fullPage: true });
    await context.close();
  }
  await creator.page.goto(env.server.base + postHref);
  assert.match(await creator.page.locator("main").innerText(), /Quetzal-harbour tier notes/);
  await creator.context.close();
});

test("a post for followers from the form without JavaScript", async () => {
  const creator = await signIn(env, "creator@demo.test", "demo-password", { javaScriptEnabled: false });
  await creator.page.goto(env.server.base + "/apps/demo/create-post");
  await creator.page.fill("#post-content", "Narwhal-lantern follower news");
  await creator.page.selectOption('[name="access"]', "FOLLOWERS");
  await creator.page.fill('[name="teaser"]', "News for followers");
  await Promise.all([creator.page.waitForURL(/\/apps\/demo\/community$/), creator.page.locator('form button[type="submit"]').last().click()]);
  const postHref = await creator.page.locator(".feed-card a", { hasText: "Narwhal-lantern" }).first().getAttribute("href");
  await creator.context.close();

  const { context, page } = await visitor({ javaScriptEnabled: false });
  await page.goto(env.server.base + postHref);
  assert.doesNotMatch(await page.content(), /Narwhal-lantern/);
  const follow = page.getByRole("link", { name: "Follow to unlock" });
  assert.equal(await follow.getAttribute("href"), "/apps/demo");
  await context.close();

  const follower = await signIn(env, "follower@demo.test", "demo-password", { javaScriptEnabled: false });
  await follower.page.goto(env.server.base + postHref);
  assert.match(await follower.page.locator("main").innerText(), /Narwhal-lantern follower news/);
  await follower.context.close();
});

test("the creator gives a follower a tier from the members screen, without JavaScript", async () => {
  const creator = await signIn(env, "creator@demo.test", "demo-password", { javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
  await creator.page.goto(env.server.base + "/apps/demo/studio/members?q=follower%40demo");
  const row = creator.page.locator('tr[data-member="follower"]');
  await row.locator("summary", { hasText: "Give a membership" }).click();
  await row.locator('select[name="tierId"]').selectOption({ label: "Backstage Pass" });
  await row.locator('select[name="months"]').selectOption("3");
  await Promise.all([creator.page.waitForURL(/notice=gift-given/), row.getByRole("button", { name: "Give" }).click()]);
  assert.match(await creator.page.locator(".added-alert").innerText(), /Membership given/);
  assert.match(await creator.page.locator('tr[data-member="follower"]').innerText(), /Backstage Pass \(gift, active\)/);
  await creator.page.screenshot({ path: join(shots, "access-gift-1280x900-nojs.png"), fullPage: false });
  await creator.context.close();

  // The follower now reads what the tier opens.
  const fan = await signIn(env, "follower@demo.test", "demo-password", { javaScriptEnabled: false });
  await fan.page.goto(env.server.base + "/apps/demo/notifications");
  assert.match(await fan.page.locator("main").innerText(), /gave you a Backstage Pass membership/);
  await fan.context.close();
});
