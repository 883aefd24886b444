import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { useServerAndBrowser, signIn, watchErrors, screenshotDir } from "./helpers.mjs";

const env = useServerAndBrowser();
const EVENT = "Sketch & Synth Meetup";
let itemPath = "";

test("the creator sells a ticket for an event from the item form", async () => {
  const { context, page } = await signIn(env, "creator@demo.test");
  const errors = watchErrors(page);
  await page.goto(env.server.base + "/apps/demo/store/items/new");
  await page.locator('form.item-form[data-hydrated="true"]').waitFor();
  assert.equal(await page.locator('select[name="eventId"]').count(), 0, "no event picker for other types");
  await page.fill('input[name="name"]', "Meetup ticket");
  await page.selectOption('select[name="type"]', "EVENT_TICKET");
  const eventId = await page.locator('select[name="eventId"] option', { hasText: EVENT }).getAttribute("value");
  await page.selectOption('select[name="eventId"]', eventId);
  await page.fill('input[name="price"]', "15");
  await page.uncheck('input[name="tracked"]');
  await page.screenshot({ path: join(screenshotDir, "ticket-item-form-390x844.png"), fullPage: true });
  await Promise.all([page.waitForURL(/\/store\/items\/[a-z2-7]{26}$/), page.locator("button", { hasText: "Create Item" }).click()]);
  itemPath = new URL(page.url()).pathname;
  assert.match(await page.locator(".ticket-event").innerText(), /Ticket for Sketch & Synth Meetup/);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a follower sees Get Ticket instead of Join Event and reaches the ticket", async () => {
  const { context, page } = await signIn(env, "follower@demo.test");
  const errors = watchErrors(page);
  await page.goto(env.server.base + "/apps/demo/events");
  await Promise.all([page.waitForURL(/\/events\/[a-z2-7]{26}$/), page.locator("a", { hasText: EVENT }).first().click()]);
  await page.locator('.event-details[data-hydrated="true"]').waitFor();
  assert.equal(await page.locator("button", { hasText: "Join Event" }).count(), 0);
  const get = page.locator("a.button", { hasText: "Get Ticket" });
  assert.equal(await get.getAttribute("href"), itemPath);
  await page.screenshot({ path: join(screenshotDir, "event-ticket-390x844.png"), fullPage: true });
  await Promise.all([page.waitForURL((u) => u.pathname === itemPath), get.click()]);
  assert.equal(await page.locator("h1").innerText(), "Meetup ticket");
  assert.deepEqual(errors, []);
  await context.close();
});
