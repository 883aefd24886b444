// The story viewer's timer (SPEC.md section 9): each image shows for exactly
// 15 seconds, then the next one; after the last the viewer closes. The page
// clock is fast-forwarded, so the test waits through whole groups in no time.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { useServerAndBrowser, signIn, watchErrors, testImagePNG, screenshotDir } from "./helpers.mjs";

const env = useServerAndBrowser();

// openGroup loads the community with a fake clock and opens the creator's stories.
async function openGroup(page, count) {
  // A cold server on a busy machine renders its first pages slowly.
  await fetch(env.server.base + "/apps/demo/community").then((r) => r.text());
  await page.goto(env.server.base + "/apps/demo/community");
  await page.locator('.stories[data-hydrated="true"]').waitFor({ timeout: 30000 });
  // The island is live (hydrated with real timers); from here on the page's
  // time moves only when the test says so.
  await page.clock.install();
  await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 1000);
  const thumb = page.locator(".story-thumb", { hasText: "creator" });
  assert.match(await thumb.innerText(), new RegExp(`${count} stories`));
  await thumb.click();
  const viewer = page.locator(".story-viewer");
  await viewer.waitFor();
  // Off the stage: hovering holds the timer.
  await page.mouse.move(5, 5);
  return viewer;
}

// watchThrough checks one story after another: at 14.9 s the counter has not
// moved, at 15 s it shows the next story; after the last the viewer closes.
async function watchThrough(page, viewer, count) {
  for (let i = 1; i <= count; i++) {
    assert.equal(await viewer.locator(".story-counter").innerText(), `${i} of ${count}`);
    // The clock only runs once the image has loaded.
    await viewer.locator(".story-stage img").waitFor();
    await viewer.locator(".story-fallback", { hasText: "Loading story" }).waitFor({ state: "detached" });
    await page.clock.runFor(14_900);
    assert.equal(await viewer.locator(".story-counter").innerText(), `${i} of ${count}`, `story ${i} left before 15 s`);
    await page.clock.runFor(100);
    if (i < count) {
      await viewer.locator(".story-counter", { hasText: `${i + 1} of ${count}` }).waitFor();
    }
  }
  await viewer.waitFor({ state: "detached" });
}

test("with two stories the second shows for 15 s before the viewer closes", async () => {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const errors = watchErrors(page);
  const viewer = await openGroup(page, 2);
  await watchThrough(page, viewer, 2);
  assert.deepEqual(errors, []);
  await context.close();
});

test("with three stories each shows in turn: 1 of 3, 2 of 3, 3 of 3", async () => {
  // The creator adds a third story through the API, as the create-story island does.
  const { context, page } = await signIn(env, "creator@demo.test");
  const landing = await (await page.request.get(env.server.base + "/api/app/demo/landing")).json();
  const communityId = landing.data?.community?.id ?? landing.community?.id;
  assert.ok(communityId, "community id from the landing call");
  const png = await testImagePNG(page);
  const created = await page.request.post(env.server.base + "/api/media", {
    data: { name: "third.png", type: "IMAGE", size: png.length, mimeType: "image/png", mediaKey: "story", appId: "demo" },
  });
  assert.equal(created.status(), 201, await created.text());
  const { data } = await created.json();
  const put = await page.request.put(data.presignedUploadUrl, { headers: { "Content-Type": "image/png" }, data: png });
  assert.equal(put.status(), 200, await put.text());
  const story = await page.request.post(env.server.base + "/api/messages", {
    data: { type: "STORY", content: "Third", communityId, attachmentIds: [data.media.id] },
  });
  assert.equal(story.status(), 201, await story.text());

  const errors = watchErrors(page);
  const viewer = await openGroup(page, 3);
  await page.screenshot({ path: join(screenshotDir, "stories-three-390x844.png") });
  await watchThrough(page, viewer, 3);
  assert.deepEqual(errors, []);
  await context.close();
});

test("without JavaScript a story opens from the strip and its Report link files a report", async () => {
  const { context, page } = await signIn(env, "follower@demo.test", "demo-password", { javaScriptEnabled: false });
  await page.goto(env.server.base + "/apps/demo/community");
  const thumb = page.locator(".story-thumb", { hasText: "creator" });
  await Promise.all([page.waitForURL(/\?story=/), thumb.click()]);
  const viewer = page.locator(".story-viewer");
  await viewer.waitFor();
  await page.screenshot({ path: join(screenshotDir, "story-viewer-nojs-390.png") });
  await Promise.all([page.waitForURL(/\/report\?type=STORY/), viewer.getByTestId("report-story").click()]);
  await page.locator('input[name="reason"][value="SPAM"]').check();
  await Promise.all([page.waitForURL(/done=1/), page.locator(".report-form button[type=submit]").click()]);
  assert.match(await page.getByTestId("report-received").innerText(), /Report received/);
  await context.close();
});

test("with JavaScript the viewer's Report link leads to the report form", async () => {
  const { context, page } = await signIn(env, "follower@demo.test");
  await page.goto(env.server.base + "/apps/demo/community");
  await page.locator('.stories[data-hydrated="true"]').waitFor({ timeout: 30000 });
  await page.locator(".story-thumb", { hasText: "creator" }).click();
  const viewer = page.locator(".story-viewer");
  await viewer.waitFor();
  assert.doesNotMatch(page.url(), /story=/, "the click opens the viewer in place");
  await page.screenshot({ path: join(screenshotDir, "story-viewer-report-390.png") });
  await Promise.all([page.waitForURL(/\/report\?type=STORY/), viewer.getByTestId("report-story").click()]);
  assert.match(await page.getByTestId("report-target").innerText(), /creator/i);
  await context.close();
});
