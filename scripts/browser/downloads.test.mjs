import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useServerAndBrowser, tempDir, signIn, screenshotDir, root } from "./helpers.mjs";

// A DIGITAL item delivers the file its creator uploads (issue 27, item 3):
// the creator adds it on the edit page without JavaScript; the buyer's
// order page offers it (not the cover) and the browser downloads the exact
// bytes.
// Parts of 5 MB (the smallest S3 takes), so a 12 MB file goes up in three.
const env = useServerAndBrowser({ DOWNLOAD_PART_MB: "5" });

// buyAndDownload has a member buy the item with the wallet and download
// its files from the order page: the bytes of the one named name.
async function buyAndDownload(email, itemId, name, dir) {
  execFileSync(join(root, "bin", "marquee"), ["wallet", "credit", "demo", email, "50"], { env: env.server.env, cwd: root, stdio: "pipe" });
  const buyer = await signIn(env, email, "demo-password", { acceptDownloads: true });
  const bp = buyer.page;
  await bp.goto(env.server.base + "/apps/demo/store");
  const orderId = await bp.evaluate(async (itemId) => {
    const call = async (method, path, body) => {
      const r = await fetch(path, { method, headers: { "Content-Type": "application/json" }, body: body && JSON.stringify(body) });
      const out = await r.json();
      if (!out.success) throw new Error(path + ": " + out.message);
      return out.data;
    };
    const storeId = (await call("GET", "/api/store/apps/demo/store")).store.id;
    await call("POST", "/api/store/" + storeId + "/cart/items", { storeItemId: itemId, variantId: null, quantity: 1 });
    const order = await call("POST", "/api/store/" + storeId + "/orders/checkout", { paymentMethod: "musepay" });
    await call("POST", "/api/store/" + storeId + "/musepay/process", { orderId: order.id });
    return order.id;
  }, itemId);
  await bp.goto(env.server.base + "/apps/demo/orders/" + orderId);
  const link = bp.locator(".downloads a", { hasText: name });
  const [download] = await Promise.all([bp.waitForEvent("download"), link.click()]);
  const saved = join(dir, "got-" + name);
  await download.saveAs(saved);
  await buyer.context.close();
  return readFileSync(saved);
}

test("the creator uploads the album's file; the buyer downloads exactly it from the order page", async () => {
  const dir = tempDir("marquee-dl-");
  const file = join(dir, "midnight-bloom.flac");
  const bytes = Buffer.concat(Array.from({ length: 3000 }, (_, i) => Buffer.from(`fLaC frame ${i} `)));
  writeFileSync(file, bytes);

  const creator = await signIn(env, "creator@demo.test", "demo-password", { javaScriptEnabled: false });
  const cp = creator.page;
  await cp.goto(env.server.base + "/apps/demo/store?type=DIGITAL");
  const href = await cp.locator(".store-grid a", { hasText: "Midnight Bloom: Digital Album" }).getAttribute("href");
  const itemId = href.split("/").pop();
  await cp.goto(env.server.base + "/apps/demo/store/items/" + itemId + "/edit");
  await cp.locator('.item-files input[type="file"]').setInputFiles(file);
  await Promise.all([cp.waitForURL(/notice=/), cp.locator(".item-files button[type=submit]").click()]);
  assert.match(await cp.locator(".item-files").innerText(), /midnight-bloom\.flac/);
  await cp.screenshot({ path: join(screenshotDir, "downloads-item-files-390x844.png"), fullPage: true });
  await creator.context.close();

  execFileSync(join(root, "bin", "marquee"), ["wallet", "credit", "demo", "aria@demo.test", "50"], { env: env.server.env, cwd: root, stdio: "pipe" });
  const buyer = await signIn(env, "aria@demo.test", "demo-password", { acceptDownloads: true });
  const bp = buyer.page;
  await bp.goto(env.server.base + "/apps/demo/store");
  const orderId = await bp.evaluate(async (itemId) => {
    const call = async (method, path, body) => {
      const r = await fetch(path, { method, headers: { "Content-Type": "application/json" }, body: body && JSON.stringify(body) });
      const out = await r.json();
      if (!out.success) throw new Error(path + ": " + out.message);
      return out.data;
    };
    const storeId = (await call("GET", "/api/store/apps/demo/store")).store.id;
    await call("POST", "/api/store/" + storeId + "/cart/items", { storeItemId: itemId, variantId: null, quantity: 1 });
    const order = await call("POST", "/api/store/" + storeId + "/orders/checkout", { paymentMethod: "musepay" });
    await call("POST", "/api/store/" + storeId + "/musepay/process", { orderId: order.id });
    return order.id;
  }, itemId);
  await bp.goto(env.server.base + "/apps/demo/orders/" + orderId);
  const links = bp.locator(".downloads a");
  assert.deepEqual(await links.allInnerTexts(), ["Download midnight-bloom.flac"], "the file, not the cover");
  await bp.screenshot({ path: join(screenshotDir, "downloads-order-390x844.png"), fullPage: true });
  const [download] = await Promise.all([bp.waitForEvent("download"), links.first().click()]);
  assert.equal(download.suggestedFilename(), "midnight-bloom.flac");
  const saved = join(dir, "got.flac");
  await download.saveAs(saved);
  assert.ok(readFileSync(saved).equals(bytes), "the exact bytes");
  await bp.reload();
  assert.match(await bp.locator(".downloads").innerText(), /Downloaded 1 time/);
  await buyer.context.close();
});

test("with JavaScript a large file goes up in parts; the network failing mid-way, Resume sends only the missing parts", async () => {
  const dir = tempDir("marquee-up-");
  const file = join(dir, "midnight-bloom-hires.flac");
  const bytes = Buffer.alloc(12 * 1024 * 1024 + 4321);
  for (let i = 0; i + 4 <= bytes.length; i += 4) bytes.writeUInt32LE((i * 2654435761) >>> 0, i);
  writeFileSync(file, bytes);

  const creator = await signIn(env, "creator@demo.test", "demo-password", { viewport: { width: 1280, height: 900 } });
  const cp = creator.page;
  await cp.goto(env.server.base + "/apps/demo/store?type=DIGITAL");
  const href = await cp.locator(".store-grid a", { hasText: "Midnight Bloom: Digital Album" }).getAttribute("href");
  const itemId = href.split("/").pop();
  await cp.goto(env.server.base + "/apps/demo/store/items/" + itemId + "/edit");
  await cp.locator(".item-files form[data-hydrated]").waitFor();

  // Part 2 fails once, as a dropped connection; every part sent is counted.
  const sent = [];
  let failed = false;
  await cp.route("**/api/store/items/*/uploads/*/parts/*", async (route) => {
    const n = Number(route.request().url().split("/").pop());
    sent.push(n);
    if (n === 2 && !failed) {
      failed = true;
      return route.abort("connectionreset");
    }
    return route.continue();
  });
  await cp.locator('.item-files input[type="file"]').setInputFiles(file);
  await cp.locator(".item-files button[type=submit]").click();
  await cp.locator(".item-files [role=alert]", { hasText: "Network error during upload" }).waitFor();
  assert.equal(await cp.locator(".item-files progress").getAttribute("value"), String(5 * 1024 * 1024), "part 1 stored, counted in the progress");
  await cp.screenshot({ path: join(screenshotDir, "downloads-upload-paused-1280x900.png"), fullPage: true });
  await Promise.all([cp.waitForURL(/notice=/), cp.locator(".item-files button", { hasText: "Resume upload" }).click()]);
  assert.deepEqual(sent, [1, 2, 2, 3], "part 1 is not sent again");
  assert.match(await cp.locator(".item-files").innerText(), new RegExp("midnight-bloom-hires\\.flac · [^·]+ · " + bytes.length + " bytes"));
  await cp.screenshot({ path: join(screenshotDir, "downloads-upload-done-1280x900.png"), fullPage: true });
  await cp.setViewportSize({ width: 390, height: 844 });
  await cp.screenshot({ path: join(screenshotDir, "downloads-upload-done-390x844.png"), fullPage: true });
  await creator.context.close();

  const got = await buyAndDownload("subscriber@demo.test", itemId, "midnight-bloom-hires.flac", dir);
  assert.ok(got.equals(bytes), "the buyer gets the exact bytes");
});
