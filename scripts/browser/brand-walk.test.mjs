// Issue 42's Done-when as one browser walk, with JavaScript on at phone
// width: a creator picks colours (a failing contrast is refused), a font and
// an icon, adds fans.example.test and verifies it against a test DNS server
// (pebble-challtestsrv); the server obtains the domain's certificate itself
// from Pebble (TLS_ACME, the challenge validated for real against this
// server); a fan opens https://fans.example.test/ (Chromium maps the name to
// the server's TLS port), signs up through the auth host and comes back
// signed in on the domain, follows, buys and signs out. Every link on the
// fan's pages stays on the domain.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { connect } from "node:tls";
import { request } from "node:https";
import { homedir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { startServer, launchBrowser, tempDir, startMailpit, mailLink, signIn, watchErrors, screenshotDir, root } from "./helpers.mjs";

const fans = "fans.example.test";
const origin = "https://" + fans;
const shots = process.env.SHOTS_DIR || screenshotDir;
mkdirSync(shots, { recursive: true });
const phone = { width: 390, height: 844 };
const pebbleDir = join(root, "server", "testdata", "pebble");
const minica = readFileSync(join(pebbleDir, "pebble.minica.pem"));

const env = { server: null, browser: null, domainBrowser: null, procs: [], pebbleLog: "", tlsPort: 0, chall: "", pebbleMgmt: "" };

// freePort asks the kernel for a free port: Pebble must be told the
// server's ports before either starts (it checks challenges on them).
async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const port = s.address().port;
  await new Promise((r) => s.close(r));
  return port;
}

function bin(name) {
  for (const dir of (process.env.PATH || "").split(":").concat(join(homedir(), "go", "bin"))) {
    try {
      execFileSync("test", ["-x", join(dir, name)]);
      return join(dir, name);
    } catch {}
  }
  throw new Error(name + " not found (make services installs it)");
}

function start(cmd, args, extraEnv = {}) {
  const child = spawn(cmd, args, { env: { ...process.env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (b) => (out += b));
  child.stderr.on("data", (b) => (out += b));
  env.procs.push(child);
  return { child, log: () => out };
}

// httpsGet answers status and body of a GET trusting Pebble's minica root.
function httpsGet(url, ca = minica) {
  return new Promise((resolve, reject) => {
    // Pebble answers 400 to a request without a User-Agent (as Boulder does).
    const req = request(url, { ca, timeout: 60000, headers: { "User-Agent": "marquee-brand-walk" } }, (res) => {
      let body = "";
      res.on("data", (b) => (body += b));
      res.on("end", () => resolve({ status: res.statusCode, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function until(what, fn, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch {}
    if (Date.now() > end) throw new Error("timed out waiting for " + what);
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  const [httpPort, tlsPort, dnsPort, challMgmt, pebblePort, pebbleMgmt] = await Promise.all([1, 2, 3, 4, 5, 6].map(freePort));
  env.tlsPort = tlsPort;
  env.chall = "http://127.0.0.1:" + challMgmt;
  env.pebbleMgmt = "https://127.0.0.1:" + pebbleMgmt;
  // The test DNS server: every name is 127.0.0.1 (A), TXT records as set.
  start(bin("pebble-challtestsrv"), ["-management", "127.0.0.1:" + challMgmt, "-dnsserver", "127.0.0.1:" + dnsPort,
    "-defaultIPv4", "127.0.0.1", "-defaultIPv6", "", "-http01", "", "-https01", "", "-tlsalpn01", "", "-doh", ""]);
  await until("pebble-challtestsrv", async () => (await fetch(env.chall + "/")).status > 0);
  // Pebble, resolving through it, checking challenges on this server's
  // ports (HTTP-01 on PORT, TLS-ALPN-01 on TLS_ADDR), never waving one through.
  const dir = tempDir("marquee-pebble-");
  const conf = join(dir, "pebble.json");
  writeFileSync(conf, JSON.stringify({ pebble: {
    listenAddress: "127.0.0.1:" + pebblePort, managementListenAddress: "127.0.0.1:" + pebbleMgmt,
    certificate: join(pebbleDir, "cert.pem"), privateKey: join(pebbleDir, "key.pem"),
    httpPort, tlsPort, ocspResponderURL: "", externalAccountBindingRequired: false,
  } }));
  const pebble = start(bin("pebble"), ["-config", conf, "-dnsserver", "127.0.0.1:" + dnsPort],
    { PEBBLE_VA_NOSLEEP: "1", PEBBLE_WFE_NONCEREJECT: "0", PEBBLE_VA_ALWAYS_VALID: "0" });
  env.pebbleLog = pebble.log;
  await until("pebble", async () => (await httpsGet(`https://127.0.0.1:${pebblePort}/dir`)).status === 200);

  env.mail = await startMailpit();
  env.server = await startServer({
    SMTP_URL: env.mail.smtpUrl, MAIL_FROM: "Marquee <mail@marquee.test>",
    PORT: String(httpPort), TLS_ACME: "true", TLS_ADDR: "127.0.0.1:" + tlsPort,
    ACME_CA: `https://127.0.0.1:${pebblePort}/dir`, ACME_CA_ROOT: join(pebbleDir, "pebble.minica.pem"), ACME_EMAIL: "ops@example.test",
    DNS_RESOLVER: "127.0.0.1:" + dnsPort, DNS_TIMEOUT: "2s",
  });
  env.browser = await launchBrowser();
  // The browser of everyone who opens the domain: its name is the
  // server's TLS port on this machine. Certificates are checked in the
  // test (the served one chains to Pebble's root); Chromium is told to
  // accept Pebble's, whose root it does not know.
  env.domainBrowser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      `--host-resolver-rules=MAP ${fans} 127.0.0.1:${tlsPort}`, "--ignore-certificate-errors"],
  });
});

after(async () => {
  await env.domainBrowser?.close();
  await env.browser?.close();
  await env.server?.stop();
  for (const p of env.procs) p.kill("SIGTERM");
  env.mail?.stop();
});

// linksOf lists every link and form target of the page, absolute.
const linksOf = (page) => page.evaluate(() => [...document.querySelectorAll("a[href], form[action], link[rel=canonical], link[rel=manifest], link[rel=icon]")]
  .map((e) => (e.tagName === "FORM" ? e.action : e.href)).filter((h) => !/^(mailto|tel|javascript):/.test(h)));

// onDomainOnly checks that every link of the page is on the domain. The
// only others allowed are the creator's own links in bio (external sites).
async function onDomainOnly(page, where) {
  const main = new URL(env.server.base).origin;
  const auth = new URL(env.server.auth).origin;
  const links = await linksOf(page);
  assert.ok(links.length > 3, `${where}: few links: ${links.join(" ")}`);
  for (const h of links) {
    const u = new URL(h);
    assert.ok(u.origin !== main && u.origin !== auth, `${where}: a link leaves the domain: ${h}`);
    if (u.hostname.endsWith(".test") || u.hostname === "localhost" || u.hostname === "127.0.0.1") {
      assert.equal(u.origin, origin, `${where}: a link leaves the domain: ${h}`);
      assert.ok(!u.pathname.startsWith("/apps/"), `${where}: a link keeps /apps/: ${h}`);
    }
  }
  return links;
}

const rgb = (hex) => "rgb(" + [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(", ") + ")";

test("a creator brands the app and puts it on fans.example.test; a fan signs up there, follows, buys and signs out", async () => {
  // 1. The creator's theme: a pale colour is refused, then theirs saved.
  const creator = await signIn(env, "creator@demo.test", "demo-password", { viewport: phone });
  const cp = creator.page;
  const cerrors = watchErrors(cp);
  await cp.goto(env.server.base + "/apps/demo/studio/theme");
  await cp.locator(".theme-editor[data-hydrated]").waitFor();
  await cp.fill('[name="primaryColor"]', "#8b9dff");
  await cp.getByRole("button", { name: "Save theme" }).click();
  await cp.getByText(/2\.51:1/).first().waitFor();
  assert.doesNotMatch(cp.url(), /notice=saved/);
  await cp.screenshot({ path: join(shots, "brand-1-contrast-refused-390x844.png"), fullPage: true });
  await cp.fill('[name="primaryColor"]', "#0b6e4f");
  await cp.fill('[name="accentColor"]', "#9a3412");
  await cp.selectOption('[name="font"]', "lora");
  await Promise.all([cp.waitForURL(/\/studio\/theme\?notice=saved$/), cp.getByRole("button", { name: "Save theme" }).click()]);
  assert.equal(await cp.locator('[name="primaryColor"]').inputValue(), "#0b6e4f");
  assert.equal(await cp.locator('[name="font"]').inputValue(), "lora");

  // 2. The icon: a square PNG drawn in the page.
  const png = Buffer.from((await cp.evaluate(() => {
    const c = document.createElement("canvas");
    c.width = c.height = 512;
    const g = c.getContext("2d");
    g.fillStyle = "#0b6e4f";
    g.fillRect(0, 0, 512, 512);
    g.fillStyle = "#fde68a";
    g.beginPath();
    g.arc(256, 256, 150, 0, Math.PI * 2);
    g.fill();
    return c.toDataURL("image/png");
  })).split(",")[1], "base64");
  await cp.setInputFiles("#icon-file", { name: "icon.png", mimeType: "image/png", buffer: png });
  await Promise.all([cp.waitForURL(/\/studio\/theme\?notice=saved$/), cp.getByRole("button", { name: "Upload icon" }).click()]);
  assert.equal(await cp.locator(".app-icon-preview").getAttribute("alt"), "Your icon");
  await cp.screenshot({ path: join(shots, "brand-2-theme-and-icon-390x844.png"), fullPage: true });

  // 3. The domain: added, its TXT record published on the test DNS
  // server, verified by Check now.
  await cp.goto(env.server.base + "/apps/demo/studio/domain");
  await cp.fill('input[name="domain"]', fans);
  await Promise.all([cp.waitForURL(/notice=domain-added/), cp.getByRole("button", { name: "Add domain" }).click()]);
  const records = await cp.locator('[data-testid="domain-state"]').innerText();
  const value = /marquee-verify=[0-9a-f]{32}/.exec(records)?.[0];
  assert.ok(value, records);
  await cp.screenshot({ path: join(shots, "brand-3-domain-records-390x844.png"), fullPage: true });
  const set = await fetch(env.chall + "/set-txt", { method: "POST", body: JSON.stringify({ host: `_marquee-verify.${fans}.`, value }) });
  assert.equal(set.status, 200);
  // Verified, the studio is on the domain now: the creator's browser
  // (which knows no such name) is sent there. The POST's answer says so.
  const check = await cp.request.post(env.server.base + "/apps/demo/studio/domain/check", { maxRedirects: 0,
    headers: { Origin: new URL(env.server.base).origin } });
  assert.equal(check.status(), 303);
  assert.match(check.headers().location, /notice=domain-verified/);
  const moved = await cp.request.get(env.server.base + "/apps/demo/studio/domain?notice=domain-verified", { maxRedirects: 0 });
  assert.equal(moved.status(), 301);
  assert.equal(moved.headers().location, origin + "/studio/domain?notice=domain-verified");
  assert.deepEqual(cerrors.filter((e) => !/^400 .*\/studio\/theme$/.test(e)), []);

  // 4. The certificate: at the first handshake for the name the server
  // obtains one from Pebble (the challenge checked against it), which
  // chains to Pebble's issuing root.
  const pebbleRoot = (await httpsGet(env.pebbleMgmt + "/roots/0")).body;
  const started = Date.now();
  const cert = await until("the certificate", () => new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port: env.tlsPort, servername: fans, ca: pebbleRoot, timeout: 60000 }, () => {
      const c = s.getPeerCertificate();
      const ok = s.authorized;
      s.end();
      resolve(ok ? c : null);
    });
    s.on("error", () => resolve(null));
  }), 90000);
  assert.match(cert.issuer.CN, /Pebble/);
  assert.equal(cert.subjectaltname, "DNS:" + fans);
  const validated = env.pebbleLog().split("\n").filter((l) => /validat|challenge/i.test(l) && /http-01|tls-alpn-01|HTTP|TLS-ALPN/.test(l));
  console.log(`certificate for ${fans} from ${cert.issuer.CN} in ${Date.now() - started} ms; Pebble's log of the challenge:\n` + validated.slice(0, 6).join("\n"));

  // 5. The fan, at phone width with JavaScript, on https://fans.example.test/.
  const context = await env.domainBrowser.newContext({ viewport: phone });
  const page = await context.newPage();
  const errors = watchErrors(page);
  const res = await page.goto(origin + "/");
  assert.equal(res.status(), 200);
  assert.equal(await page.locator('link[rel="canonical"]').getAttribute("href"), origin);
  assert.match(await page.content(), /--accent:#0b6e4f/);
  assert.equal(await page.locator('meta[name="theme-color"]').getAttribute("content"), "#0b6e4f");
  assert.match(await page.evaluate(() => getComputedStyle(document.body).fontFamily), /^"?Lora"?/);
  assert.equal(await page.locator("a.button, button.button").first().evaluate((e) => getComputedStyle(e).backgroundColor), rgb("#0b6e4f"));
  assert.match(await page.locator('link[rel="icon"]').first().getAttribute("href"), /^\/icons\/favicon\.png/);
  // Asked by the page itself: the test process cannot resolve the domain (Chromium maps it).
  const manifest = await page.evaluate(async () => (await fetch("/manifest.webmanifest")).json());
  assert.equal(manifest.scope, "/");
  assert.equal(manifest.theme_color, "#0b6e4f");
  const imgs = await page.evaluate(() => [...document.images].map((i) => i.currentSrc || i.src).filter(Boolean));
  assert.ok(imgs.length > 0 && imgs.every((s) => s.startsWith(origin + "/")), "images not on the domain: " + imgs.join(" "));
  await onDomainOnly(page, "landing");
  await page.screenshot({ path: join(shots, "brand-4-fan-landing-390x844.png"), fullPage: true });

  // Sign up through the auth host; back on the domain, signed in.
  await Promise.all([page.waitForURL((u) => u.toString().startsWith(env.server.auth + "/authenticate/signup")),
    page.locator("a", { hasText: "Sign Up" }).first().click()]);
  await page.fill("#field-email", "brandfan@example.test");
  await page.fill("#field-username", "brandfan");
  await page.fill("#field-password", "a-long-password");
  await Promise.all([page.waitForURL(/\/authenticate\/welcome/), page.locator("button[type=submit]").click()]);
  await page.screenshot({ path: join(shots, "brand-5-welcome-390x844.png"), fullPage: true });
  await Promise.all([page.waitForURL(origin + "/"), page.getByRole("link", { name: /^Continue to / }).click()]);
  const me = await page.evaluate(async () => (await fetch("/api/auth/me")).json());
  assert.equal(me.data?.user?.username ?? me.user?.username, "brandfan", JSON.stringify(me));
  assert.ok((await context.cookies(origin)).some((c) => c.name === "marquee_session" && c.domain === fans), "no session cookie of the domain's own");
  // The address is confirmed from the mail (on the auth host, where accounts live).
  const confirm = await mailLink(env, "brandfan@example.test", /Confirm your e-mail/);
  assert.ok(confirm.startsWith(origin + "/") || confirm.startsWith(env.server.auth + "/"), "the confirmation link: " + confirm);
  await page.goto(confirm);
  await page.getByRole("heading", { name: "Address confirmed" }).waitFor();

  // Follow, on the profile.
  await page.goto(origin + "/profile");
  const follow = page.locator(".profile-actions button", { hasText: "Follow" });
  await follow.waitFor();
  await page.waitForFunction(() => {
    const el = document.querySelector('marquee-island[data-island="ProfileActions"] button');
    return el && Object.keys(el).some((k) => k.startsWith("__react"));
  });
  await follow.click();
  await page.locator(".profile-actions button", { hasText: "Unfollow" }).waitFor();
  await onDomainOnly(page, "profile");
  await page.screenshot({ path: join(shots, "brand-6-followed-390x844.png"), fullPage: true });

  // Buy: the operator credits the fan's wallet; the enamel pin set, shipped.
  execFileSync(join(root, "bin", "marquee"), ["wallet", "credit", "demo", "brandfan@example.test", "50"], { env: env.server.env, cwd: root, stdio: "pipe" });
  await page.goto(origin + "/store?search=pin");
  await onDomainOnly(page, "store");
  await Promise.all([page.waitForURL(/\/store\/items\//), page.locator(".item-card a").first().click()]);
  assert.ok(page.url().startsWith(origin + "/store/items/"), page.url());
  await page.locator('.add-to-cart[data-hydrated="true"]').waitFor();
  await onDomainOnly(page, "item");
  await page.locator(".add-button").click();
  await page.locator(".added-alert", { hasText: "Added" }).waitFor();
  await page.goto(origin + "/cart");
  await onDomainOnly(page, "cart");
  await Promise.all([page.waitForURL(/\/checkout$/), page.locator("a.checkout-button").click()]);
  await onDomainOnly(page, "checkout");
  await Promise.all([page.waitForURL(/orderId=/), page.getByRole("button", { name: "Continue to Shipping" }).click()]);
  for (const [name, v] of [["firstName", "Ada"], ["lastName", "Lovelace"], ["address", "1 Main St"], ["city", "Portland"], ["state", "OR"], ["zipCode", "97201"]]) {
    await page.fill(`input[name="${name}"]`, v);
  }
  await Promise.all([page.waitForURL(/step=payment/), page.getByRole("button", { name: "Continue to Payment" }).click()]);
  await page.locator('.checkout-pay[data-hydrated="true"]').waitFor();
  assert.match(await page.locator(".method.selected").innerText(), /Wallet/);
  await onDomainOnly(page, "payment");
  await page.screenshot({ path: join(shots, "brand-7-payment-390x844.png"), fullPage: true });
  await Promise.all([page.waitForURL(/payment-success/), page.locator(".pay-button").click()]);
  assert.ok(page.url().startsWith(origin + "/payment-success"), page.url());
  await page.getByRole("heading", { name: "Payment Successful!" }).waitFor();
  await onDomainOnly(page, "payment success");
  await page.screenshot({ path: join(shots, "brand-8-paid-390x844.png"), fullPage: true });
  await Promise.all([page.waitForURL(/\/orders\/[a-z2-7]{26}$/), page.getByRole("link", { name: "View Order Details" }).click()]);
  assert.ok(page.url().startsWith(origin + "/orders/"), page.url());
  assert.match(await page.locator(".status").innerText(), /Payment Confirmed/);
  await onDomainOnly(page, "order");

  // Sign out on the domain: both sessions end.
  await page.goto(origin + "/profile");
  await page.locator(".profile-actions").waitFor();
  await Promise.all([page.waitForURL((u) => !u.toString().startsWith(origin + "/profile")), page.getByRole("button", { name: "Sign Out" }).click()]);
  await page.goto(origin + "/");
  assert.equal(await page.evaluate(async () => (await fetch("/api/auth/me")).status), 401);
  assert.equal((await context.request.get(env.server.base + "/api/auth/me")).status(), 401, "the auth host's session outlived the sign-out");
  await page.screenshot({ path: join(shots, "brand-9-signed-out-390x844.png"), fullPage: true });
  assert.deepEqual(errors.filter((e) => !/^401 .*\/api\/auth\/me/.test(e)), []);
  await context.close();
  await creator.context.close();
});
