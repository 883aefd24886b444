// Shared helpers for browser tests: start a seeded Marquee on free ports with
// its own SQLite database, and launch Debian's Chromium via playwright-core.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { before, after } from "node:test";
import { chromium } from "playwright-core";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const screenshotDir = join(root, "scripts", "browser", "screenshots");

// startServer seeds a fresh SQLite database and runs serve on PORT=0 and
// AUTH_PORT=0: the server binds free ports itself and logs them, so no port
// is guessed here and none can be taken by another process in between.
// Returns base URLs, logs() and stop(); a start that fails throws with the
// server's log.
export async function startServer(extraEnv = {}) {
  const dir = mkdtempSync(join(tmpdir(), "marquee-browser-"));
  const env = {
    ...process.env,
    PORT: "0",
    AUTH_PORT: "0",
    DATABASE_URL: join(dir, "marquee.db"),
    MEDIA_DIR: join(dir, "media"),
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
  try {
    execFileSync(bin, ["seed-demo"], { env, cwd: root, stdio: "pipe" });
  } catch (e) {
    throw new Error("seed-demo failed:\n" + e.stderr);
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

export async function launchBrowser() {
  mkdirSync(screenshotDir, { recursive: true });
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
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

// signIn signs a demo user in through the real auth-site form and returns a
// page back on the main site.
export async function signIn(env, email, password = "demo-password", contextOptions = {}) {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 }, ...contextOptions });
  const page = await context.newPage();
  await page.goto(env.server.auth + "/authenticate/signin?app=demo");
  await page.fill('[name="email"]', email);
  await page.fill('[name="password"]', password);
  await Promise.all([
    page.waitForURL((u) => u.toString().startsWith(env.server.base)),
    page.locator('form button[type="submit"]').click(),
  ]);
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
  const bin = join(mkdtempSync(join(tmpdir(), "fakepay-")), "fakepaypal");
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
