import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { startServer, launchBrowser, screenshotDir } from "./helpers.mjs";

let server, browser;
before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

// A real PNG (a 64x64 gradient), built here so the test needs no fixture file.
function gradientPNG() {
  const w = 64, h = 64;
  const raw = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y++) {
    raw[y * (w * 3 + 1)] = 0;
    for (let x = 0; x < w; x++) {
      const o = y * (w * 3 + 1) + 1 + x * 3;
      raw[o] = 124 + x; raw[o + 1] = 58 + y; raw[o + 2] = 237 - x;
    }
  }
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; ihdr[9] = 2;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

async function signIn(email) {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await page.goto(server.auth + "/authenticate/signin?app=demo");
  await page.fill('[name="email"]', email);
  await page.fill('[name="password"]', "demo-password");
  await Promise.all([page.waitForURL((u) => u.toString().startsWith(server.base)), page.locator('form button[type="submit"]').click()]);
  return { context, page };
}

function watchErrors(page) {
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  // Failed loads are recorded with their URL below; the console's copy of
  // them has none (and the browser's own favicon probe is one of them).
  page.on("console", (m) => m.type() === "error" && !m.text().startsWith("Failed to load resource") && errors.push(m.text()));
  page.on("response", (r) => r.status() >= 400 && errors.push(r.status() + " " + r.url()));
  return errors;
}

const POST_TEXT = "Browser test post with a gradient " + Date.now();

test("the creator posts an image; it leads the feed and the landing page", async () => {
  const { context, page } = await signIn("creator@demo.test");
  const errors = watchErrors(page);
  await page.goto(server.base + "/apps/demo/create-post");
  await page.locator('form.create-form[data-hydrated="true"]').waitFor();
  // Share is refused while empty, with the SPEC wording.
  await page.locator("button", { hasText: "Share" }).click();
  await page.locator(".inline-error", { hasText: "Please add some content or media to your post" }).waitFor();
  await page.fill("#post-content", POST_TEXT);
  await page.setInputFiles('input[type="file"]', { name: "gradient.png", mimeType: "image/png", buffer: gradientPNG() });
  await page.locator('.media-status[data-state="uploaded"]').waitFor();
  await Promise.all([page.waitForURL(/\/apps\/demo\/community$/), page.locator("button", { hasText: "Share" }).click()]);
  const first = page.locator(".feed-card").first();
  assert.match(await first.innerText(), /Browser test post/);
  assert.equal(await first.locator("img.feed-visual").count(), 1, "the image is on the first card");
  const src = await first.locator("img.feed-visual").getAttribute("src");
  const img = await page.request.get(src);
  assert.equal(img.status(), 200);
  assert.equal(img.headers()["content-type"], "image/png");

  await page.goto(server.base + "/apps/demo");
  const landingFirst = page.locator('section[aria-label="Posts"] li').first();
  assert.match(await landingFirst.innerText(), /Browser test post with a gradient/);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a follower likes the new post and comments on it", async () => {
  const { context, page } = await signIn("follower@demo.test");
  const errors = watchErrors(page);
  await page.goto(server.base + "/apps/demo/community");
  await Promise.all([page.waitForURL(/\/posts\//), page.locator(".feed-card a").first().click()]);
  assert.match(await page.locator(".post-body").innerText(), /Browser test post/);
  await page.locator('.like[data-hydrated="true"]').waitFor();
  assert.equal(await page.locator(".like-count").innerText(), "0");
  await page.locator(".like-button").click();
  assert.equal(await page.locator(".like-count").innerText(), "1");
  await page.locator('.like-button[aria-pressed="true"]').waitFor();

  await page.locator('.comments[data-hydrated="true"]').waitFor();
  assert.match(await page.locator(".comments").innerText(), /No comments yet. Be the first to comment!/);
  await page.fill("#comment-text", "   ");
  assert.equal(await page.locator(".comment-form button").isDisabled(), true, "blank comment cannot be sent");
  await page.fill("#comment-text", "Love the colours!");
  await page.locator(".comment-form button").click();
  await page.locator(".comment", { hasText: "Love the colours!" }).waitFor();

  // Both survive a reload: they were stored, not just drawn.
  await page.reload();
  assert.equal(await page.locator(".like-count").innerText(), "1");
  assert.equal(await page.locator('.like-button[aria-pressed="true"]').count(), 1);
  assert.equal(await page.locator(".comment", { hasText: "Love the colours!" }).count(), 1);
  // Unlike lowers the count again.
  await page.locator('.like[data-hydrated="true"]').waitFor();
  await page.locator(".like-button").click();
  assert.equal(await page.locator(".like-count").innerText(), "0");
  assert.deepEqual(errors, []);
  await context.close();
});

test("the story viewer advances by keyboard and closes at the end", async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(server.base + "/apps/demo/community");
  await page.locator('.stories[data-hydrated="true"]').waitFor({ timeout: 10000 }).catch((e) => {
    throw new Error(e.message + "\nerrors: " + errors.join("\n"));
  });
  await page.locator(".feed-card img").first().waitFor();
  await page.screenshot({ path: join(screenshotDir, "community-feed-390x844.png") });

  const thumb = page.locator(".story-thumb", { hasText: "creator" });
  assert.match(await thumb.innerText(), /2 stories/);
  await thumb.click();
  const viewer = page.locator(".story-viewer");
  await viewer.waitFor();
  assert.equal(await viewer.locator(".story-counter").innerText(), "1 of 2");
  assert.match(await viewer.innerText(), /Click left\/right to navigate/);
  assert.match(await viewer.locator(".story-timer").innerText(), /15s/);
  await viewer.locator(".story-stage img").waitFor();
  await page.mouse.move(5, 5); // off the stage: hovering would hold the timer
  await page.waitForTimeout(400);
  await page.screenshot({ path: join(screenshotDir, "stories-viewer-390x844.png") });

  await page.keyboard.press("ArrowRight");
  assert.equal(await viewer.locator(".story-counter").innerText(), "2 of 2");
  await page.keyboard.press("ArrowLeft");
  assert.equal(await viewer.locator(".story-counter").innerText(), "1 of 2");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  await viewer.waitFor({ state: "detached" });

  // Escape closes too; going back from the first story closes.
  await thumb.click();
  await viewer.waitFor();
  await page.keyboard.press("Escape");
  await viewer.waitFor({ state: "detached" });
  await thumb.click();
  await viewer.waitFor();
  await page.keyboard.press("ArrowLeft");
  await viewer.waitFor({ state: "detached" });
  assert.deepEqual(errors, []);
  await context.close();
});

test("Load More Posts appends the next page until there is none", async () => {
  const page = await browser.newPage();
  await page.goto(server.base + "/apps/demo/community");
  await page.locator('.feed[data-hydrated="true"]').waitFor({ timeout: 10000 });
  const before = await page.locator(".feed-card").count();
  assert.equal(before, 20);
  await page.locator("button", { hasText: "Load More Posts" }).click();
  await page.waitForFunction(() => document.querySelectorAll(".feed-card").length > 20);
  assert.equal(await page.locator(".feed-card").count(), 31);
  assert.equal(await page.locator("button", { hasText: "Load More Posts" }).count(), 0);
  await page.close();
});
