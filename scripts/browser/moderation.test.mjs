import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { useServerAndBrowser, signIn, watchErrors, root } from "./helpers.mjs";

// Moderation end to end (issue 26): members report a post (one with
// JavaScript, one without), it hides at the app's threshold, a moderator
// reviews it in the studio and bans the author, who can no longer write or
// follow again.
const env = useServerAndBrowser();
const shots = "/tmp/shots-mod";
mkdirSync(shots, { recursive: true });

async function shoot(page, name) {
  for (const [w, h] of [
    [390, 844],
    [1280, 900],
  ]) {
    await page.setViewportSize({ width: w, height: h });
    await page.screenshot({ path: join(shots, `${name}-${w}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 390, height: 844 });
}

async function json(page, method, path, body) {
  return page.evaluate(
    async ({ method, path, body }) => {
      const r = await fetch(path, { method, headers: { "Content-Type": "application/json" }, body: body ? JSON.stringify(body) : undefined });
      return { status: r.status, body: await r.json() };
    },
    { method, path, body },
  );
}

test("reported post hides at the threshold; a moderator bans its author, who cannot write or rejoin", async () => {
  // Threshold 2: two members' reports hide the post.
  execFileSync(join(root, "bin", "marquee"), ["app", "set", "demo", "moderation.reportThreshold=2"], { env: env.server.env, cwd: root, stdio: "pipe" });

  // The author (a subscriber) posts.
  const author = await signIn(env, "subscriber@demo.test");
  await author.page.goto(env.server.base + "/apps/demo/community");
  const landing = await json(author.page, "GET", "/api/app/demo/landing");
  const created = await json(author.page, "POST", "/api/messages", {
    content: "Buy followers cheap, zorblax deal",
    type: "POST",
    communityId: landing.body.data.community.id,
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const postId = created.body.data.id;
  const postURL = env.server.base + "/apps/demo/posts/" + postId;

  // First report with JavaScript on: the follower follows the Report link.
  const follower = await signIn(env, "follower@demo.test");
  const errors = watchErrors(follower.page);
  await follower.page.goto(postURL);
  await Promise.all([follower.page.waitForURL(/\/report\?/), follower.page.getByTestId("report-post").click()]);
  assert.match(await follower.page.getByTestId("report-target").innerText(), /zorblax/);
  await follower.page.locator('input[name="reason"][value="SPAM"]').check();
  await Promise.all([follower.page.waitForURL(/done=1/), follower.page.locator(".report-form button[type=submit]").click()]);
  assert.match(await follower.page.getByTestId("report-received").innerText(), /Report received/);
  await shoot(follower.page, "report-received");
  assert.deepEqual(errors, []);
  // One report is under the threshold: still visible.
  let res = await follower.page.goto(postURL);
  assert.equal(res.status(), 200);

  // Second report without JavaScript: a plain form post.
  const member = await signIn(env, "member@demo.test", "demo-password", { javaScriptEnabled: false });
  await member.page.goto(env.server.base + "/apps/demo/report?type=POST&id=" + postId);
  await shoot(member.page, "report-form-nojs");
  await member.page.locator('input[name="reason"][value="OTHER"]').check();
  await member.page.fill('textarea[name="text"]', "Selling fake followers");
  await Promise.all([member.page.waitForURL(/done=1/), member.page.locator(".report-form button[type=submit]").click()]);
  assert.match(await member.page.getByTestId("report-received").innerText(), /Report received/);

  // The threshold hid it: gone for members and visitors, marked for its author.
  res = await follower.page.goto(postURL);
  assert.equal(res.status(), 404);
  await follower.page.goto(env.server.base + "/apps/demo/community");
  assert.doesNotMatch(await follower.page.locator("main").innerText(), /zorblax/);
  const visitor = await env.browser.newContext({ javaScriptEnabled: false });
  const vp = await visitor.newPage();
  res = await vp.goto(postURL);
  assert.equal(res.status(), 404);
  await author.page.goto(postURL);
  assert.match(await author.page.getByTestId("hidden-mark").innerText(), /Hidden while moderators review it/);
  await shoot(author.page, "hidden-post-author");

  // The moderator reviews the queue without JavaScript and bans the author.
  const mod = await signIn(env, "moderator@demo.test", "demo-password", { javaScriptEnabled: false });
  await mod.page.goto(env.server.base + "/apps/demo/studio/moderation");
  const item = mod.page.locator(`[data-testid="queue-item"][data-target="${postId}"]`);
  const text = await item.innerText();
  assert.match(text, /2 reports/);
  assert.match(text, /spam ×1/);
  assert.match(text, /other ×1/);
  assert.match(text, /Selling fake followers/);
  assert.match(text, /Hidden by reports until reviewed/);
  await shoot(mod.page, "moderation-queue");
  const actions = item.locator("form.mod-actions");
  await actions.locator('select[name="days"]').selectOption("0");
  await actions.locator('input[name="reason"]').fill("Spam selling");
  await Promise.all([mod.page.waitForURL(/done=/), actions.locator('button[data-action="BAN"]').click()]);
  assert.match(await mod.page.getByTestId("moderation-done").innerText(), /@subscriber is banned/);
  assert.match(await mod.page.locator(".mod-bans").innerText(), /@subscriber\s+banned\s+for good/);
  assert.match(await mod.page.locator(".mod-log").innerText(), /BAN[\s\S]*Spam selling/);
  assert.match(await mod.page.locator(".mod-log").innerText(), /AUTO_HIDE/);
  await shoot(mod.page, "moderation-after-ban");

  // The banned author can no longer write, react or follow again (JS on).
  const again = await json(author.page, "POST", "/api/messages", {
    content: "back again",
    type: "POST",
    communityId: landing.body.data.community.id,
  });
  assert.equal(again.status, 403);
  assert.match(again.body.message, /You are banned from this app\. Reason: Spam selling/);
  const follow = await json(author.page, "POST", "/api/notifications/follow/demo", {});
  assert.equal(follow.status, 403);

  // ... nor without JavaScript: the follow form answers the same refusal.
  const authorNoJS = await signIn(env, "subscriber@demo.test", "demo-password", { javaScriptEnabled: false });
  await authorNoJS.page.goto(env.server.base + "/apps/demo/store");
  const followButton = authorNoJS.page.locator('form[action$="/follow"] button');
  if ((await followButton.count()) > 0) {
    const [resp] = await Promise.all([authorNoJS.page.waitForNavigation(), followButton.first().click()]);
    assert.equal(resp.status(), 403);
  } else {
    const resp = await authorNoJS.page.request.post(env.server.base + "/apps/demo/follow", {
      headers: { Origin: env.server.base, "Sec-Fetch-Site": "same-origin" },
    });
    assert.equal(resp.status(), 403);
  }
  assert.match(await authorNoJS.page.locator("body").innerText(), /banned/i);
  await shoot(authorNoJS.page, "banned-follow-refused");

  // The post form without JavaScript refuses the banned author with the
  // ban's reason, keeping what they wrote.
  await authorNoJS.page.goto(env.server.base + "/apps/demo/create-post");
  const postForm = authorNoJS.page.locator('form[action$="/create-post"]');
  if ((await postForm.count()) > 0) {
    await postForm.locator('textarea[name="content"]').fill("banned but posting anyway");
    const [resp] = await Promise.all([authorNoJS.page.waitForNavigation(), postForm.locator('button[type="submit"]').click()]);
    assert.equal(resp.status(), 403);
  } else {
    const resp = await authorNoJS.page.request.post(env.server.base + "/apps/demo/create-post", {
      headers: { Origin: env.server.base, "Sec-Fetch-Site": "same-origin" },
      multipart: { content: "banned but posting anyway" },
    });
    assert.equal(resp.status(), 403);
    assert.match(await resp.text(), /You are banned from this app/);
  }
  assert.match(await authorNoJS.page.locator("body").innerText(), /You are banned from this app\. Reason: Spam selling/);
  await shoot(authorNoJS.page, "banned-post-refused");

  for (const c of [author, follower, member, mod, authorNoJS]) await c.context.close();
  await visitor.close();
});
