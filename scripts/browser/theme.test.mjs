// The app's own theme (issue 42 item 1): the creator sets colours, font and
// corners in the studio without JavaScript (a failing contrast is refused
// with a suggestion; the Preview button shows the proposal unsaved), and
// with JavaScript (the sample follows the fields live); the landing then
// wears the theme at 390 and 1280 px, seen in computed styles, with no
// JavaScript needed for it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startServer, launchBrowser, signIn, watchErrors, screenshotDir, root } from "./helpers.mjs";

const env = { server: null, browser: null };
const shots = process.env.SHOTS_DIR || screenshotDir;
mkdirSync(shots, { recursive: true });

before(async () => {
  env.server = await startServer();
  env.browser = await launchBrowser();
});
after(async () => {
  await env.browser?.close();
  await env.server?.stop();
});

// rgb is a #rrggbb colour as computed styles give it.
const rgb = (hex) => "rgb(" + [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(", ") + ")";

test("the creator sets the theme without JavaScript: refused contrast, preview, save", async () => {
  const { context, page } = await signIn(env, "creator@demo.test", "demo-password", { javaScriptEnabled: false });
  const errors = watchErrors(page);
  const shot = (name) => page.screenshot({ path: join(shots, "theme-" + name + "-390x844-nojs.png"), fullPage: true });

  await page.goto(env.server.base + "/apps/demo/studio");
  await Promise.all([page.waitForURL(/\/studio\/theme$/), page.locator(".studio-nav a", { hasText: "Theme" }).click()]);
  assert.equal(await page.locator('[name="primaryColor"]').inputValue(), "#7c3aed");

  // A pale primary fails contrast on white: refused, named, with a suggestion.
  await page.fill('[name="primaryColor"]', "#8b9dff");
  await page.getByRole("button", { name: "Save theme" }).click();
  const refusal = await page.locator(".field-error").first().innerText();
  assert.match(refusal, /2\.51:1/);
  assert.match(refusal, /Try #5a66a6/);
  assert.equal(await page.locator('[name="primaryColor"]').inputValue(), "#8b9dff");
  await shot("refused");

  // Preview: the page wears the proposal, nothing is saved.
  await page.fill('[name="primaryColor"]', "#0b6e4f");
  await page.fill('[name="accentColor"]', "#9a3412");
  await page.selectOption('[name="font"]', "lora");
  await page.selectOption('[name="corners"]', "square");
  await Promise.all([page.waitForURL(/\/studio\/theme\/preview\?/), page.getByRole("button", { name: "Preview" }).click()]);
  assert.match(await page.locator('[role="status"]').innerText(), /Preview/);
  assert.equal(await page.locator(".theme-editor .button").first().evaluate((e) => getComputedStyle(e).backgroundColor), rgb("#0b6e4f"));
  await shot("preview");

  await Promise.all([page.waitForURL(/\/studio\/theme\?notice=saved$/), page.getByRole("button", { name: "Save theme" }).click()]);
  assert.equal(await page.locator('[name="primaryColor"]').inputValue(), "#0b6e4f");
  assert.equal(await page.locator('[name="font"]').inputValue(), "lora");
  // The refused save answered 400, as it should; nothing else failed.
  assert.deepEqual(errors.filter((e) => !/^400 .*\/studio\/theme$/.test(e)), []);
  await context.close();
});

test("the themed landing at 390 and 1280 px, without and with JavaScript", async () => {
  for (const [width, height, js] of [[390, 844, false], [1280, 800, true]]) {
    const context = await env.browser.newContext({ viewport: { width, height }, javaScriptEnabled: js });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(env.server.base + "/apps/demo");
    // The colour as written is in the server's HTML.
    assert.match(await page.content(), /--accent:#0b6e4f/);
    assert.equal(await page.locator('meta[name="theme-color"]').getAttribute("content"), "#0b6e4f");
    const button = page.locator("a.button, button.button").first();
    assert.equal(await button.evaluate((e) => getComputedStyle(e).backgroundColor), rgb("#0b6e4f"));
    assert.equal(await button.evaluate((e) => getComputedStyle(e).borderRadius), "2px");
    assert.match(await page.evaluate(() => getComputedStyle(document.body).fontFamily), /^"?Lora"?/);
    await page.evaluate(() => document.fonts.ready);
    // check() is true for a family nothing declares: ask for the loaded face itself.
    assert.ok(await page.evaluate(async () => (await document.fonts.load('16px "Lora"')).some((f) => f.family.replace(/"/g, "") === "Lora" && f.status === "loaded")),
      "Lora loaded from our own origin");
    const active = page.locator(".footer-tab.active");
    if (await active.count()) assert.equal(await active.first().evaluate((e) => getComputedStyle(e).color), rgb("#9a3412"));
    await page.screenshot({ path: join(shots, `theme-landing-${width}x${height}${js ? "" : "-nojs"}.png`), fullPage: true });
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test("with JavaScript the studio's sample follows the fields and shows the contrast", async () => {
  const { context, page } = await signIn(env, "creator@demo.test", "demo-password", { viewport: { width: 1280, height: 800 } });
  const errors = watchErrors(page);
  await page.goto(env.server.base + "/apps/demo/studio/theme");
  await page.locator(".theme-editor[data-hydrated]").waitFor();
  const sampleButton = page.locator(".theme-sample .button");
  assert.equal(await sampleButton.evaluate((e) => getComputedStyle(e).backgroundColor), rgb("#0b6e4f"));
  await page.fill('[name="primaryColor"]', "#8b9dff");
  assert.equal(await sampleButton.evaluate((e) => getComputedStyle(e).backgroundColor), rgb("#8b9dff"));
  assert.match(await page.locator(".contrast").first().innerText(), /2\.51:1 is below 4\.5:1/);
  // Each bundled font can be tried in the sample (the stylesheet declares them all).
  await page.selectOption('[name="font"]', "nunito");
  assert.match(await page.locator(".theme-sample").evaluate((e) => getComputedStyle(e).fontFamily), /^"?Nunito"?/);
  assert.ok(await page.evaluate(async () => (await document.fonts.load('16px "Nunito"')).some((f) => f.family.replace(/"/g, "") === "Nunito" && f.status === "loaded")),
    "Nunito loads for the sample");
  await page.selectOption('[name="scheme"]', "dark");
  assert.match(await page.locator(".contrast").first().innerText(), /passes/);
  assert.equal(await page.locator(".theme-sample").evaluate((e) => getComputedStyle(e).backgroundColor), rgb("#111827"));
  await page.screenshot({ path: join(shots, "theme-studio-live-1280x800.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await context.close();
});

test("the creator uploads a square icon without JavaScript; the installed app's manifest and the tab use it", async () => {
  const { context, page } = await signIn(env, "creator@demo.test", "demo-password", { javaScriptEnabled: false });
  const errors = watchErrors(page);
  await page.goto(env.server.base + "/apps/demo/studio/theme");
  // Before an upload: the monogram in the app's colours.
  assert.match(await page.locator(".app-icon-preview").getAttribute("alt"), /monogram/);
  let manifest = await (await page.request.get(env.server.base + "/apps/demo/manifest.webmanifest")).json();
  assert.deepEqual(manifest.icons.map((i) => i.sizes + " " + i.type + " " + i.purpose),
    ["192x192 image/png any", "512x512 image/png any", "512x512 image/png maskable", "any image/svg+xml any"]);
  await page.screenshot({ path: join(shots, "theme-icon-monogram-390x844-nojs.png"), fullPage: true });

  // A square 512 px icon drawn in a canvas of another page (this one has no JavaScript).
  const drawer = await env.browser.newPage();
  const png = Buffer.from((await drawer.evaluate(() => {
    const c = document.createElement("canvas");
    c.width = c.height = 512;
    const g = c.getContext("2d");
    g.fillStyle = "#f59e0b";
    g.fillRect(0, 0, 512, 512);
    g.fillStyle = "#1e3a8a";
    g.beginPath();
    g.arc(256, 256, 160, 0, Math.PI * 2);
    g.fill();
    return c.toDataURL("image/png");
  })).split(",")[1], "base64");
  await drawer.close();
  await page.setInputFiles("#icon-file", { name: "icon.png", mimeType: "image/png", buffer: png });
  await Promise.all([page.waitForURL(/\/studio\/theme\?notice=saved$/), page.getByRole("button", { name: "Upload icon" }).click()]);
  assert.equal(await page.locator(".app-icon-preview").getAttribute("alt"), "Your icon");

  manifest = await (await page.request.get(env.server.base + "/apps/demo/manifest.webmanifest")).json();
  assert.equal(manifest.scope, "/apps/demo/");
  assert.equal(manifest.theme_color, "#0b6e4f");
  assert.equal(manifest.icons.length, 3);
  for (const icon of manifest.icons) {
    const r = await page.request.get(env.server.base + icon.src);
    assert.equal(r.headers()["content-type"], "image/png");
    const size = await page.evaluate(async (src) => {
      const img = new Image();
      img.src = src;
      await img.decode();
      return img.naturalWidth + "x" + img.naturalHeight;
    }, env.server.base + icon.src).catch(() => null);
    // Without JavaScript the page cannot decode; the bytes say the size.
    const body = await r.body();
    assert.equal(size ?? body.readUInt32BE(16) + "x" + body.readUInt32BE(20), icon.sizes);
  }
  const favicon = await page.locator('link[rel="icon"]').getAttribute("href");
  assert.match(favicon, /\/apps\/demo\/icons\/favicon\.png\?v=/);
  await page.screenshot({ path: join(shots, "theme-icon-uploaded-390x844-nojs.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await context.close();
});

// axe (as a11y.test.mjs runs it) on a themed app: the contrast rule at
// saving keeps WCAG AA on a dark theme and on an auto theme in dark mode.
const AXE = join(root, "node_modules", "axe-core", "axe.min.js");
const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];

test("axe finds nothing on a dark-themed app, and on an auto theme in dark mode", async () => {
  const { context } = await signIn(env, "creator@demo.test");
  for (const [theme, scheme] of [[{ primaryColor: "#8b9dff", accentColor: "#fbbf24", scheme: "dark", font: "nunito" }, "light"],
    [{ primaryColor: "#0b6e4f", accentColor: "#9a3412", scheme: "auto", font: "inter" }, "dark"]]) {
    const r = await context.request.put(env.server.base + "/api/studio/apps/demo/theme", { data: theme });
    assert.equal(r.status(), 200, await r.text());
    const visitor = await env.browser.newContext({ viewport: { width: 390, height: 844 }, bypassCSP: true, colorScheme: scheme });
    const page = await visitor.newPage();
    const found = {};
    for (const url of [env.server.base + "/apps/demo", env.server.base + "/apps/demo/store", env.server.base + "/apps/demo/events",
      env.server.auth + "/authenticate/signin?app=demo"]) {
      await page.goto(url);
      await page.waitForLoadState("load");
      await page.evaluate(() => new Promise((r) => requestIdleCallback(() => r(), { timeout: 1000 })));
      await page.addScriptTag({ path: AXE });
      const v = await page.evaluate(async (tags) => {
        const res = await window.axe.run(document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] });
        return res.violations.map((v) => v.id + ": " + v.nodes.slice(0, 3).map((n) => n.target.join(" ") + " " + (n.failureSummary || "").split("\n").slice(1, 2).join("")).join(" | "));
      }, TAGS);
      if (v.length) found[url] = v;
    }
    assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor), rgb("#111827"), "dark background");
    await page.goto(env.server.base + "/apps/demo");
    await page.screenshot({ path: join(shots, "theme-" + theme.scheme + "-landing-390x844.png"), fullPage: true });
    assert.deepEqual(found, {}, theme.scheme + " theme");
    await visitor.close();
  }
  await context.close();
});
