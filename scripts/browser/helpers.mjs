// Shared helpers for browser tests: start a seeded Marquee on free ports with
// its own SQLite database, and launch Debian's Chromium via playwright-core.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, cpSync, existsSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { before, after } from "node:test";
import { chromium } from "playwright-core";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const screenshotDir = join(root, "scripts", "browser", "screenshots");

// tempDir makes a directory removed when the test file's process ends (not
// when a server stops: a test may start a second server on the first one's
// database).
export function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

// One exit listener for them all (Node warns past ten listeners, and a
// file may start more servers than that).
const tempDirs = [];
process.once("exit", () => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

// startServer seeds a fresh SQLite database and runs serve on PORT=0 and
// AUTH_PORT=0: the server binds free ports itself and logs them, so no port
// is guessed here and none can be taken by another process in between.
// Returns base URLs, logs() and stop(); a start that fails throws with the
// server's log.
export async function startServer(extraEnv = {}) {
  const dir = tempDir("marquee-browser-");
  const env = {
    ...process.env,
    PORT: "0",
    AUTH_PORT: "0",
    DATABASE_URL: join(dir, "marquee.db"),
    MEDIA_DIR: join(dir, "media"),
    // Mails (without SMTP_URL) are .eml files beside the database.
    MAIL_DIR: join(dir, "mail"),
    PUBLIC_URL: "",
    AUTH_URL: "",
    REDIS_URL: "",
    // No load balancer to wait for: stop at once when the tests end.
    SHUTDOWN_DELAY: "0s",
    // A busy CI machine must not turn a slow render into the 503 fallback.
    RENDER_TIMEOUT: "60s",
    ...extraEnv,
  };
  const bin = join(root, "bin", "marquee");
  const own = "DATABASE_URL" in extraEnv || "MEDIA_DIR" in extraEnv;
  if (process.env.BROWSER_SEED_TEMPLATE && !own) {
    const template = seededTemplate(bin, process.env.BROWSER_SEED_TEMPLATE);
    cpSync(template, dir, { recursive: true });
  } else {
    seedDemo(bin, env);
  }
  const child = spawn(bin, ["serve"], { env, cwd: root, stdio: ["ignore", "inherit", "pipe"] });
  let stderr = "";
  const bound = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stderr });
    lines.on("line", (line) => {
      stderr += line + "\n";
      const main = /msg=serving main=(\S+)\/apps auth=(\S+)\/authenticate\/signin/.exec(line);
      if (main) resolve({ base: main[1], auth: main[2] });
    });
    child.once("exit", (code) => reject(new Error(`server exited (${code}) before serving:\n${stderr}`)));
  });
  return {
    base: bound.base,
    auth: bound.auth,
    env,
    logs: () => stderr,
    // stop ends the server; a log with errors in it is printed, so a
    // failing test shows what the server saw.
    stop: async () => {
      if (child.exitCode === null) {
        await new Promise((resolve) => {
          child.once("exit", resolve);
          child.kill("SIGTERM");
        });
      }
      if (/level=ERROR/.test(stderr)) console.log("server log (it has errors):\n" + stderr);
    },
  };
}

function seedDemo(bin, env) {
  try {
    execFileSync(bin, ["seed-demo"], { env, cwd: root, stdio: "pipe" });
  } catch (e) {
    throw new Error("seed-demo failed:\n" + e.stderr);
  }
}

// seededTemplate returns a directory holding a freshly migrated and seeded
// demo (marquee.db and media/), made once per `make test-browser` run
// (BROWSER_SEED_TEMPLATE names where it lives) and copied by every server
// start: seeding costs seconds of CPU, copying a few milliseconds. Two test
// files starting at once may both seed; the first rename wins and the other
// copy is dropped, so a half-written template is never read.
function seededTemplate(bin, path) {
  if (existsSync(path)) return path;
  const work = mkdtempSync(path + ".seeding-");
  seedDemo(bin, {
    ...process.env,
    DATABASE_URL: join(work, "marquee.db"),
    MEDIA_DIR: join(work, "media"),
    MAIL_DIR: join(work, "mail"),
    REDIS_URL: "",
  });
  try {
    renameSync(work, path);
  } catch (e) {
    if (!existsSync(path)) throw e;
    rmSync(work, { recursive: true, force: true });
  }
  return path;
}

const busyMachineTimeout = 90_000;

export async function launchBrowser() {
  mkdirSync(screenshotDir, { recursive: true });
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options = {}) => {
    const context = await newContext(options);
    // Playwright's 30 s default is a timing assertion on a busy machine:
    // beside a CPU hog (load 25 on two cores) a starved renderer took over
    // 30 s to take one click. The deadline only guards against a hang.
    context.setDefaultTimeout(busyMachineTimeout);
    context.setDefaultNavigationTimeout(busyMachineTimeout);
    if (options.javaScriptEnabled !== false) {
      context.pages().forEach(waitForIslandsAfterNavigating);
      context.on("page", waitForIslandsAfterNavigating);
    }
    return context;
  };
  return browser;
}

// Islands hydrate once the page has loaded and painted (islands/client.ts),
// after Playwright's navigations resolve: a test clicking right after one
// would reach the server's plain form, not the island. So with JavaScript on,
// every navigation also waits until each island that hydrates at once is
// live (islands/lib/runtime.ts marks it data-live). Islands that hydrate when
// idle or visible, and pages whose islands cannot load (a test taking the
// network away), are the test's to wait for.
const navigations = ["goto", "reload", "goBack", "goForward", "waitForURL", "waitForNavigation", "waitForLoadState"];

function waitForIslandsAfterNavigating(page) {
  for (const name of navigations) {
    const navigate = page[name].bind(page);
    page[name] = async (...args) => {
      const result = await navigate(...args);
      await islandsLive(page);
      return result;
    };
  }
}

async function islandsLive(page) {
  const pending = () =>
    document.querySelectorAll('marquee-island:not([data-when="idle"]):not([data-when="visible"]):not([data-live])').length === 0;
  await page.waitForFunction(pending, null, { timeout: 60_000 }).catch(() => {});
}

// useServerAndBrowser starts a seeded server and a browser for the test file
// and stops both at its end; the returned object is filled in before().
export function useServerAndBrowser(extraEnv = {}) {
  const env = { server: null, browser: null };
  before(async () => {
    env.server = await startServer(extraEnv);
    env.browser = await launchBrowser();
  });
  after(async () => {
    await env.browser?.close();
    await env.server?.stop();
  });
  return env;
}

// signIn signs a demo user in and returns a page on the app's landing. It
// posts the auth site's sign-in call from the context (the session cookie
// lands in the context's cookie jar) rather than walking the form: the form
// is auth.test.mjs's subject, and its two page loads per sign-in cost
// Chromium more than the request. A refused sign-in throws with the answer.
export async function signIn(env, email, password = "demo-password", contextOptions = {}) {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 }, ...contextOptions });
  const answer = await context.request.post(env.server.auth + "/authenticate/signin?app=demo", {
    data: { email, password },
    headers: { Origin: env.server.auth },
  });
  if (!answer.ok()) throw new Error(`sign-in of ${email} answered ${answer.status()}: ${await answer.text()}`);
  const { data } = await answer.json();
  const page = await context.newPage();
  await page.goto(new URL(data.redirectTo, env.server.base).toString());
  return { context, page };
}

// watchErrors collects page errors, console errors and failed responses (by
// URL, so a test can tell expected failures apart).
export function watchErrors(page) {
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  // The console's copy of a failed load has no URL (the browser's own
  // favicon probe is one); failed responses are recorded with theirs below.
  page.on("console", (m) => m.type() === "error" && !m.text().startsWith("Failed to load resource") && errors.push(m.text()));
  page.on("response", (r) => r.status() >= 400 && errors.push(r.status() + " " + r.url()));
  return errors;
}

// testImagePNG draws a small gradient in the browser's canvas and returns it
// as PNG bytes, so upload tests need no fixture file.
export async function testImagePNG(page) {
  const dataUrl = await page.evaluate(() => {
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 64;
    const g = canvas.getContext("2d");
    const grad = g.createLinearGradient(0, 0, 64, 64);
    grad.addColorStop(0, "#7c3aed");
    grad.addColorStop(1, "#f472b6");
    g.fillStyle = grad;
    g.fillRect(0, 0, 64, 64);
    return canvas.toDataURL("image/png");
  });
  return Buffer.from(dataUrl.split(",")[1], "base64");
}

// startFakePayments builds and runs scripts/fakepaypal (the PayPal fake and,
// with "-stripe", the Stripe fake); it prints one URL per fake, first line
// first. Returns { paypal, stripe, stop }.
export async function startFakePayments(args = []) {
  const bin = join(tempDir("fakepay-"), "fakepaypal");
  execFileSync("go", ["build", "-o", bin, "./scripts/fakepaypal"], { cwd: root, stdio: "inherit" });
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "inherit"] });
  const want = args.includes("-stripe") ? 2 : 1;
  const urls = await new Promise((resolve, reject) => {
    const got = [];
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (l) => {
      got.push(l.trim());
      if (got.length === want) resolve(got);
    });
    child.once("exit", (code) => reject(new Error("fakepaypal exited " + code)));
  });
  return { paypal: urls[0], stripe: urls[1], stop: () => child.kill("SIGTERM") };
}

// startMailpit runs a real mailpit (SMTP plus an HTTP API) on free ports.
// mailpit binds port 0 without logging the ports it got, so they are read
// from its own listening sockets (its fds' inodes in /proc/PID/net/tcp);
// the HTTP one answers GET /api/v1/info. Returns { smtpUrl, api, waitFor,
// stop }; waitFor(address, n) polls until n mails reached the address and
// answers the newest with its Text, HTML and raw headers.
export async function startMailpit() {
  const { readdirSync, readlinkSync, readFileSync } = await import("node:fs");
  const dir = tempDir("marquee-mailpit-");
  const child = spawn("mailpit", ["-s", "127.0.0.1:0", "-l", "127.0.0.1:0", "-d", join(dir, "mp.db")], { stdio: "ignore" });
  const ports = () => {
    const inodes = new Set();
    try {
      for (const fd of readdirSync(`/proc/${child.pid}/fd`)) {
        try {
          const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${child.pid}/fd/${fd}`));
          if (m) inodes.add(m[1]);
        } catch {}
      }
    } catch {
      return [];
    }
    const out = [];
    for (const file of ["tcp", "tcp6"]) {
      let text = "";
      try {
        text = readFileSync(`/proc/${child.pid}/net/${file}`, "utf8");
      } catch {
        continue;
      }
      for (const line of text.split("\n").slice(1)) {
        const f = line.trim().split(/\s+/);
        if (f.length >= 10 && f[3] === "0A" && inodes.has(f[9])) out.push(parseInt(f[1].split(":").pop(), 16));
      }
    }
    return out;
  };
  const deadline = Date.now() + 30000;
  let api = "", smtp = "";
  while (Date.now() < deadline && !(api && smtp)) {
    const found = ports();
    if (found.length >= 2) {
      for (const p of found) {
        try {
          const r = await fetch(`http://127.0.0.1:${p}/api/v1/info`, { signal: AbortSignal.timeout(1000) });
          if (r.ok) api = `http://127.0.0.1:${p}`;
        } catch {}
      }
      smtp = found.map((p) => `smtp://127.0.0.1:${p}`).find((u) => !u.endsWith(":" + api.split(":").pop())) ?? "";
    }
    if (!(api && smtp)) await new Promise((r) => setTimeout(r, 50));
  }
  if (!api || !smtp) {
    child.kill();
    throw new Error("mailpit did not listen within 30s");
  }
  const list = async (address) => {
    const r = await fetch(api + "/api/v1/search?query=" + encodeURIComponent("to:" + address));
    return (await r.json()).messages ?? [];
  };
  return {
    smtpUrl: smtp,
    api,
    list,
    waitFor: async (address, n = 1) => {
      const until = Date.now() + 60000;
      for (;;) {
        const msgs = await list(address);
        if (msgs.length >= n) {
          const msg = await (await fetch(api + "/api/v1/message/" + msgs[0].ID)).json();
          msg.Raw = await (await fetch(api + "/api/v1/message/" + msgs[0].ID + "/raw")).text();
          return msg;
        }
        if (Date.now() > until) throw new Error(`mailpit: ${msgs.length} mail(s) to ${address}, want ${n}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    stop: () => child.kill(),
  };
}

// mailLink waits for the mail to address whose subject matches (in the
// mailpit of env.mail) and answers the link with a token in its text.
export async function mailLink(env, address, subject) {
  const until = Date.now() + 60_000;
  for (;;) {
    const found = (await env.mail.list(address)).find((m) => subject.test(m.Subject));
    if (found) {
      const msg = await (await fetch(env.mail.api + "/api/v1/message/" + found.ID)).json();
      const m = /(https?:\/\/\S+token=[A-Za-z0-9_-]+)/.exec(msg.Text);
      if (!m) throw new Error("no link with a token in:\n" + msg.Text);
      return m[1];
    }
    if (Date.now() > until) throw new Error(`no mail "${subject}" to ${address}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// signUpAndConfirm signs a new account up through the auth site's form,
// goes on from the "Check your inbox" page and opens the mailed link.
export async function signUpAndConfirm(env, page, email, username, password, appName = "") {
  await page.goto(env.server.auth + "/authenticate/signup" + (appName ? "?app=" + appName : ""));
  await page.fill("#field-email", email);
  await page.fill("#field-username", username);
  await page.fill("#field-password", password);
  await Promise.all([page.waitForURL(/\/authenticate\/welcome/), page.locator("button[type=submit]").click()]);
  const said = await page.locator("main").innerText();
  if (!/Check your inbox/.test(said)) throw new Error("after signing up: " + said);
  await Promise.all([page.waitForURL((u) => u.toString().startsWith(env.server.base)), page.getByRole("link", { name: /^Continue/ }).click()]);
  await page.goto(await mailLink(env, email, /Confirm your e-mail/));
  await page.getByRole("heading", { name: "Address confirmed" }).waitFor();
}

// createApp makes an app from the apps page as its signed-in creator, who
// lands on its launch checklist.
export async function createApp(env, page, name, display) {
  await page.goto(env.server.base + "/apps");
  await page.fill("#app-name", name);
  await page.fill("#app-display-name", display);
  await Promise.all([page.waitForURL(new RegExp("/apps/" + name + "/studio/launch\\?notice=created")), page.locator("button", { hasText: "Create app" }).click()]);
}

// startRelay forwards every request it gets to relay.target (set once the
// server is up) with its method, headers and body: the fake payment
// services need their webhook URL before the server, which binds port 0,
// has one. Answers 503 until a target is set, as an unreachable endpoint.
export async function startRelay() {
  const { createServer } = await import("node:http");
  const relay = { url: "", target: "", stop: () => server.close() };
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    if (!relay.target) {
      res.writeHead(503).end();
      return;
    }
    const headers = { ...req.headers };
    delete headers.host;
    delete headers["content-length"];
    try {
      const r = await fetch(relay.target + req.url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      res.writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "text/plain" }).end(Buffer.from(await r.arrayBuffer()));
    } catch {
      res.writeHead(502).end();
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  relay.url = "http://127.0.0.1:" + server.address().port;
  return relay;
}

// The browser cannot reach Stripe: a stand-in Stripe.js mounts a card form
// and confirms the PaymentIntent through the fake Stripe API, as Stripe.js
// does with the publishable key and the client secret.
export const fakeStripeJS = `(function () {
  function Stripe(pk) {
    var clientSecret = "";
    return {
      _registerWrapper: function () {},
      elements: function (opts) {
        clientSecret = opts.clientSecret;
        return { create: function () { return {
          mount: function (el) { el.innerHTML = '<div class="fake-payment-element"><label>Card number <input value="4242 4242 4242 4242" readonly></label></div>'; },
          destroy: function () {},
        }; } };
      },
      confirmPayment: function () {
        var id = clientSecret.split("_secret_")[0];
        return fetch("https://api.stripe.com/v1/payment_intents/" + id + "/confirm", {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded" },
          body: "payment_method=pm_card_visa&key=" + encodeURIComponent(pk) + "&client_secret=" + encodeURIComponent(clientSecret),
        }).then(function (r) { return r.json(); }).then(function (j) { return j.error ? { error: j.error } : { paymentIntent: j }; });
      },
    };
  }
  Stripe.version = "endive";
  window.Stripe = Stripe;
})();`;
