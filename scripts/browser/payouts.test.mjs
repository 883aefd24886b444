// The studio's Payouts screen (issue 24) against the local fake Stripe
// (scripts/fakepaypal -stripe), which serves Connect and a stand-in for
// Stripe's hosted onboarding page. The creator connects the demo app's
// Stripe account, finishes onboarding on "Stripe", comes back to the
// studio, which asks Stripe how the account stands and shows it active, and
// opens the Express dashboard. With JavaScript off on a phone and on on a
// desktop, each on a server and fake of its own (the account is the app's).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startServer, startFakePayments, launchBrowser, signIn, watchErrors, screenshotDir } from "./helpers.mjs";

mkdirSync(screenshotDir, { recursive: true });

async function flow({ javaScriptEnabled, viewport, label }) {
  const fake = await startFakePayments(["-stripe", "-stripe-webhook-secret", "whsec_browser"]);
  let server, browser;
  try {
    server = await startServer({
      STRIPE_SECRET_KEY: "sk_test_browser",
      STRIPE_PUBLISHABLE_KEY: "pk_test_browser",
      STRIPE_WEBHOOK_SECRET: "whsec_browser",
      STRIPE_CONNECT_WEBHOOK_SECRET: "whsec_connect_fake",
      STRIPE_API_BASE: fake.stripe,
      PLATFORM_FEE_PERCENT: "5",
      PAYOUTS_REQUIRED: "true",
    });
    browser = await launchBrowser();
    const env = { server, browser };
    const { context, page } = await signIn(env, "creator@demo.test", "demo-password", { viewport, javaScriptEnabled });
    const errors = watchErrors(page);
    const shot = (name) => page.screenshot({ path: join(screenshotDir, `payouts-${label}-${name}-${viewport.width}x${viewport.height}.png`), fullPage: true });

    await page.goto(server.base + "/apps/demo/studio");
    await Promise.all([page.waitForURL(/\/studio\/payouts$/), page.locator(".studio-nav a", { hasText: "Payouts" }).click()]);
    await page.locator(".payout-state", { hasText: "Not connected" }).waitFor();
    assert.match(await page.locator(".studio").innerText(), /Platform fee: 5% of each payment/);
    assert.match(await page.locator(".studio").innerText(), /Statement by month/);
    await shot("not-connected");

    // Connect: the studio makes the account and sends the browser to
    // Stripe's onboarding.
    // Where the money goes is asked with the creator's password again.
    await page.locator('form:has(button:has-text("Connect with Stripe")) input[name="password"]').fill("demo-password");
    await Promise.all([page.waitForURL((u) => u.toString().startsWith(fake.stripe + "/connect/onboarding/")), page.locator("button", { hasText: "Connect with Stripe" }).click()]);
    await page.locator("#fake-onboarding-submit").waitFor();
    // Finishing it comes back to the studio, which shows the account active.
    await Promise.all([page.waitForURL(/\/studio\/payouts\?notice=payouts-ready/), page.locator("#fake-onboarding-submit").click()]);
    await page.locator('.payout-state[data-state="ACTIVE"]').waitFor();
    const text = await page.locator(".studio").innerText();
    assert.match(text, /Your Stripe account is connected/);
    assert.match(text, /Charges: enabled/);
    assert.match(text, /Payouts to your bank: enabled/);
    assert.equal(await page.locator("button", { hasText: "Connect with Stripe" }).count(), 0);
    await shot("active");

    // The Express dashboard opens through a one-time login link.
    await page.locator('form:has(button:has-text("Stripe dashboard")) input[name="password"]').fill("demo-password");
    await Promise.all([page.waitForURL((u) => u.toString().startsWith(fake.stripe + "/connect/express/acct_")), page.locator("button", { hasText: "Stripe dashboard" }).click()]);
    assert.match(await page.locator("h1").innerText(), /Express dashboard of acct_/);

    // The statement's CSV export is a plain link.
    const csv = await context.request.get(server.base + "/apps/demo/studio/payouts/statement.csv");
    assert.equal(csv.status(), 200);
    assert.match(await csv.text(), /^month,payments,gross,platform_fees,processor_fees,refunds,fees_refunded,net,currency/);
    // The fake Stripe pages have no favicon; errors of our pages count.
    assert.deepEqual(errors.filter((e) => !e.includes(fake.stripe)), []);
    await context.close();
  } finally {
    await browser?.close();
    await server?.stop();
    fake.stop();
  }
}

test("payouts: connect, onboard and come back, without JavaScript on a phone", async () => {
  await flow({ javaScriptEnabled: false, viewport: { width: 390, height: 844 }, label: "nojs" });
});

test("payouts: connect, onboard and come back, with JavaScript on a desktop", async () => {
  await flow({ javaScriptEnabled: true, viewport: { width: 1280, height: 900 }, label: "js" });
});
