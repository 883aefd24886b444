import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { useServerAndBrowser, screenshotDir } from "./helpers.mjs";

const env = useServerAndBrowser();

test("without JavaScript the landing page shows every section's content", async () => {
  const context = await env.browser.newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const res = await page.goto(env.server.base + "/apps/demo");
  assert.equal(res.status(), 200);
  const body = page.locator("body");
  // Header, banner, bio (sanitised), sign-in buttons, links, and the three sections.
  await assert.doesNotReject(page.locator("header.app-header").waitFor());
  assert.ok(await page.locator("img.banner").count(), "banner image");
  assert.match(await page.locator(".bio").innerText(), /\S/);
  assert.equal(await page.locator(".bio script").count(), 0, "bio script removed");
  assert.ok(await page.locator("a", { hasText: "Sign In" }).getAttribute("href").then((h) => h.includes("/authenticate/signin?app=demo")));
  assert.ok(await page.locator("a", { hasText: "Sign Up" }).getAttribute("href").then((h) => h.includes("/authenticate/signup?app=demo")));
  assert.ok((await page.locator(".links li").count()) >= 3, "link-in-bio links");
  for (const title of ["Posts", "Upcoming Events", "Featured Items"]) {
    const section = page.locator(`section[aria-label="${title}"]`);
    assert.equal(await section.count(), 1, title + " section");
    assert.ok((await section.locator("li").count()) > 0, title + " has content");
    assert.equal(await section.locator("a.view-all").count(), 0, "no View all for visitors");
  }
  assert.match(await body.innerText(), /Home/);
  // The footer is made of real links: without JavaScript they still lead
  // somewhere, and the page they lead to has its content in the HTML.
  await page.locator("nav.footer a", { hasText: "Feed" }).click();
  await page.waitForURL(/\/apps\/demo\/community$/);
  assert.ok((await page.locator(".feed-card").count()) > 0, "the feed renders without JavaScript");
  await context.close();
});

test("a visitor's landing ships no JavaScript and its footer drawer still opens", async () => {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const errors = [];
  const scripts = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("request", (r) => r.resourceType() === "script" && scripts.push(r.url()));
  await page.goto(env.server.base + "/apps/demo");
  await page.waitForLoadState("networkidle");
  assert.deepEqual(scripts, [], "no script requested");
  assert.equal(await page.locator("script[src], link[rel=modulepreload]").count(), 0, "no script or preload in the HTML");
  const drawer = page.locator(".footer-drawer");
  assert.equal(await drawer.locator(".footer-drawer-items a", { hasText: "Chat" }).isVisible(), false);
  await page.locator(".footer-drawer-tab").click();
  await page.locator(".footer-drawer-items a", { hasText: "Chat" }).waitFor({ state: "visible" });
  await page.screenshot({ path: join(screenshotDir, "landing-390x844.png"), fullPage: false });
  await page.screenshot({ path: join(screenshotDir, "landing-390x844-full.png"), fullPage: true });
  assert.deepEqual(errors.filter((e) => !e.includes("favicon") && !e.includes("ERR_")), []);
  await context.close();
});

test("an unknown app answers a 404 page", async () => {
  const page = await env.browser.newPage();
  const res = await page.goto(env.server.base + "/apps/no-such-app");
  assert.equal(res.status(), 404);
  assert.match(await page.locator("h1").innerText(), /Not found/);
  await page.close();
});
