import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { useServerAndBrowser, screenshotDir } from "./helpers.mjs";

const env = useServerAndBrowser();

// loadAll scrolls through the page so lazy images load, then waits for them.
async function loadAll(page) {
  await page.evaluate(async () => {
    for (let y = 0; y < document.body.scrollHeight; y += 400) {
      window.scrollTo(0, y);
      await new Promise((r) => setTimeout(r, 50));
    }
    window.scrollTo(0, 0);
  });
  await page.waitForFunction(() => [...document.images].every((i) => i.complete));
}

// imagesOf reports every image's rendered and natural size, fit and source.
function imagesOf(page) {
  return page.evaluate(() =>
    [...document.images].map((i) => ({
      src: i.currentSrc,
      cls: i.className,
      fit: getComputedStyle(i).objectFit,
      w: i.clientWidth,
      h: i.clientHeight,
      nw: i.naturalWidth,
      nh: i.naturalHeight,
      loading: i.getAttribute("loading"),
    })),
  );
}

// On a phone (390 px, 2x), every image loads, none is stretched out of its
// shape, and the small ones load a resized copy instead of the original.
for (const [name, path] of [
  ["landing", "/apps/demo"],
  ["community", "/apps/demo/community"],
]) {
  test(`the ${name} page's images on a 390 px phone`, async () => {
    const context = await env.browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
    const page = await context.newPage();
    const res = await page.goto(env.server.base + path);
    assert.equal(res.status(), 200);
    await loadAll(page);
    const images = await imagesOf(page);
    assert.ok(images.length >= 3, "images on the page");
    for (const im of images) {
      assert.ok(im.nw > 0, "loaded: " + im.src);
      // "fill" (the default) draws the image into its box: the box must
      // have the image's shape. cover/contain keep the shape by themselves.
      if (im.fit === "fill" && im.w > 0) {
        const drawn = im.w / im.h;
        const own = im.nw / im.nh;
        assert.ok(Math.abs(drawn - own) / own < 0.03, `stretched: ${im.src} drawn ${im.w}x${im.h}, is ${im.nw}x${im.nh}`);
      }
      // No image is wider than twice its box needs plus one step of the
      // srcset ladder: a 72 px thumbnail does not load a 1200 px original.
      if (im.w > 0 && im.src.includes("/media/i/")) {
        assert.ok(im.nw <= Math.max(im.w * 2 * 2.1, 200), `too large a file for its box: ${im.src} (${im.nw} px for ${im.w} px)`);
      }
    }
    if (name === "landing") {
      const thumbs = images.filter((i) => i.w === 72);
      assert.ok(thumbs.length > 0 && thumbs.every((t) => /\/media\/i\/[^/]+\/192$/.test(t.src)), "post thumbnails load the 192 px copy");
    }
    await page.screenshot({ path: join(screenshotDir, `images-${name}-390.png`), fullPage: true });
    await page.screenshot({ path: join(screenshotDir, `images-${name}-390-first-screen.png`) });
    await context.close();
  });
}
