import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { useServerAndBrowser, watchErrors, testImagePNG, screenshotDir } from "./helpers.mjs";

const env = useServerAndBrowser();

const NAME = "Rooftop Synth Session " + Date.now();
let eventPath = "";

// signInAt is helpers.signIn in a browser set to a time zone, so the test
// sees times switch from the server's UTC to the visitor's zone.
async function signInAt(email, timezoneId) {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 }, timezoneId, acceptDownloads: true });
  const page = await context.newPage();
  await page.goto(env.server.auth + "/authenticate/signin?app=demo");
  await page.fill('[name="email"]', email);
  await page.fill('[name="password"]', "demo-password");
  await Promise.all([page.waitForURL((u) => u.toString().startsWith(env.server.base)), page.locator('form button[type="submit"]').click()]);
  return { context, page };
}

test("the creator creates an event with a banner and becomes its host", async () => {
  const { context, page } = await signInAt("creator@demo.test", "America/Los_Angeles");
  const errors = watchErrors(page);
  await page.goto(env.server.base + "/apps/demo/create-event");
  await page.locator('form.create-form[data-hydrated="true"]').waitFor();
  // Defaults of SPEC.md section 9.
  assert.equal(await page.locator('select[name="type"]').inputValue(), "MEETUP");
  assert.equal(await page.locator('input[name="startTime"]').inputValue(), "18:00");
  assert.equal(await page.locator('input[name="endTime"]').inputValue(), "20:00");
  assert.equal(await page.locator("button", { hasText: "Create Event" }).isDisabled(), true, "no name, no create");
  await page.fill('input[name="name"]', NAME);
  await page.fill('textarea[name="description"]', "Patches, headphones and a view. Bring your own synth.");
  await page.fill('input[name="location"]', "Roof of the Lantern Cafe");
  // Start tomorrow so the test never runs into "in the past" after 18:00.
  const endDate = await page.locator('input[name="endDate"]').inputValue();
  await page.fill('input[name="startDate"]', endDate);
  await page.setInputFiles('.media-field input[type="file"]', { name: "banner.png", mimeType: "image/png", buffer: await testImagePNG(page) });
  await page.locator('.media-status[data-state="uploaded"]').waitFor();
  await page.screenshot({ path: join(screenshotDir, "event-create-390x844.png"), fullPage: true });
  await Promise.all([page.waitForURL(/\/apps\/demo\/events\/[a-z2-7]{26}$/), page.locator("button", { hasText: "Create Event" }).click()]);
  eventPath = new URL(page.url()).pathname;

  await page.locator('.event-details[data-hydrated="true"]').waitFor();
  assert.equal(await page.locator(".event-details h1").innerText(), NAME);
  assert.equal(await page.locator(".event-details .badge", { hasText: "Event Host" }).count(), 1);
  assert.equal(await page.locator(".carousel img").count() >= 1, true, "the banner leads the carousel");
  // After hydration the times are the visitor's (Los Angeles), not UTC.
  const start = page.locator(".event-facts time").first();
  await page.locator('.event-facts time[data-local="true"]').first().waitFor();
  assert.doesNotMatch(await start.innerText(), /UTC$/);
  assert.match(await start.innerText(), /6:00 PM P[SD]T$/);
  assert.equal(await page.locator("button", { hasText: "Leave Event" }).count(), 0, "the host cannot leave");
  await page.screenshot({ path: join(screenshotDir, "event-detail-host-390x844.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await context.close();
});

test("a follower finds the event, joins it and adds it to their calendar", async () => {
  const { context, page } = await signInAt("follower@demo.test", "Asia/Tokyo");
  const errors = watchErrors(page);
  await page.goto(env.server.base + "/apps/demo/events?search=" + encodeURIComponent("Rooftop Synth"));
  const card = page.locator(".event-list-card", { hasText: NAME });
  await card.waitFor();
  assert.match(await card.innerText(), /Upcoming/);
  await page.goto(env.server.base + "/apps/demo/events");
  await page.screenshot({ path: join(screenshotDir, "events-list-390x844.png"), fullPage: true });
  // Load More Events appends the next page of the same list in place.
  await page.goto(env.server.base + "/apps/demo/events?limit=4");
  assert.equal(await page.locator(".event-list-card").count(), 4);
  await page.locator('a.load-more[data-hydrated="true"]').click();
  await page.waitForFunction(() => document.querySelectorAll(".event-list-card").length === 8);
  assert.equal(new URL(page.url()).search, "?limit=4", "no navigation");

  await page.goto(env.server.base + eventPath);
  await page.locator('.event-details[data-hydrated="true"]').waitFor();
  assert.equal(await page.locator(".attendee-count").innerText(), "1");
  await page.locator("button", { hasText: "Join Event" }).click();
  // Optimistic: the count and the button change before the server answers;
  // the attendee list reloads once it has.
  await page.locator("button", { hasText: "Leave Event" }).waitFor();
  assert.equal(await page.locator(".attendee-count").innerText(), "2");
  await page.locator(".attendee", { hasText: "@follower" }).waitFor();
  await page.reload();
  await page.locator("button", { hasText: "Leave Event" }).waitFor();
  assert.equal(await page.locator(".attendee-count").innerText(), "2");

  const [download] = await Promise.all([page.waitForEvent("download"), page.locator("a", { hasText: "Add to Calendar" }).click()]);
  assert.match(download.suggestedFilename(), /^Rooftop_Synth_Session_\d+\.ics$/);
  const ics = readFileSync(await download.path(), "utf8");
  assert.match(ics, /^BEGIN:VCALENDAR\r\n/);
  assert.match(ics, /DTSTART:\d{8}T\d{6}Z\r\n/);
  assert.match(ics, /SUMMARY:Rooftop Synth Session/);
  await page.screenshot({ path: join(screenshotDir, "event-detail-attendee-390x844.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await context.close();
});

test("the host makes the follower a moderator", async () => {
  const { context, page } = await signInAt("creator@demo.test", "UTC");
  const errors = watchErrors(page);
  await page.goto(env.server.base + eventPath);
  await page.locator('.attendees[data-hydrated="true"]').waitFor();
  const row = page.locator(".attendee", { hasText: "@follower" });
  await row.locator("button", { hasText: "Make Moderator" }).click();
  await row.locator("button", { hasText: "Remove Moderator" }).waitFor();
  await page.reload();
  await page.locator(".attendee", { hasText: "@follower" }).locator(".badge", { hasText: "Moderator" }).waitFor();
  assert.deepEqual(errors, []);
  await context.close();
});

test("join and leave work without JavaScript", async () => {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(env.server.auth + "/authenticate/signin?app=demo");
  await page.fill('[name="email"]', "subscriber@demo.test");
  await page.fill('[name="password"]', "demo-password");
  await Promise.all([page.waitForURL((u) => u.toString().startsWith(env.server.base)), page.locator('form button[type="submit"]').click()]);
  await page.goto(env.server.base + eventPath);
  assert.match(await page.locator(".event-facts time").first().innerText(), /UTC$/, "without JavaScript times stay in UTC");
  await Promise.all([page.waitForURL((u) => u.pathname === eventPath), page.locator("button", { hasText: "Join Event" }).click()]);
  await page.locator("button", { hasText: "Leave Event" }).waitFor();
  assert.equal(await page.locator(".attendee-count").innerText(), "3");
  // Leaving asks first: without JavaScript the page asks, and Yes leaves.
  await Promise.all([page.waitForURL(/\?confirm=leave$/), page.locator("button", { hasText: "Leave Event" }).click()]);
  await Promise.all([page.waitForURL((u) => u.pathname === eventPath && u.search === ""), page.locator("button", { hasText: "Yes, leave" }).click()]);
  await page.locator("button", { hasText: "Join Event" }).waitFor();
  await context.close();
});

test("the host edits inline, removes an attendee and deletes the event, each confirmed", async () => {
  const { context, page } = await signInAt("creator@demo.test", "UTC");
  const errors = watchErrors(page);
  const dialogs = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.accept();
  });
  await page.goto(env.server.base + eventPath);
  await page.locator('.event-details[data-hydrated="true"]').waitFor();
  await page.locator("button", { hasText: "Edit Event" }).click();
  await page.locator("form.event-edit").waitFor();
  await page.locator("form.event-edit label", { hasText: "Location" }).locator("input").fill("Roof terrace, level 7");
  await page.locator("button", { hasText: "Save Changes" }).click();
  await page.locator(".event-facts dd", { hasText: "Roof terrace, level 7" }).waitFor();
  await page.reload();
  await page.locator(".event-facts dd", { hasText: "Roof terrace, level 7" }).waitFor();

  await page.locator('.attendees[data-hydrated="true"]').waitFor();
  await page.locator(".attendee", { hasText: "@follower" }).locator("button", { hasText: /^Remove$/ }).click();
  await page.locator(".attendee", { hasText: "@follower" }).waitFor({ state: "detached" });
  assert.equal(dialogs.at(-1), "Are you sure you want to remove this attendee?");

  await Promise.all([page.waitForURL(/\/apps\/demo\/events$/), page.locator("button", { hasText: "Delete Event" }).click()]);
  assert.equal(dialogs.at(-1), "Are you sure you want to delete this event?");
  assert.equal(await page.locator(".event-list-card", { hasText: NAME }).count(), 0);
  assert.deepEqual(errors, []);
  await context.close();
});
