// Shared helpers for browser tests: start a seeded Marquee on free ports with
// its own SQLite database, and launch Debian's Chromium via playwright-core.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const screenshotDir = join(root, "scripts", "browser", "screenshots");

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// startServer runs migrate, seed-demo and serve; returns base URLs and stop().
export async function startServer(extraEnv = {}) {
  const dir = mkdtempSync(join(tmpdir(), "marquee-browser-"));
  const port = await freePort();
  const authPort = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    AUTH_PORT: String(authPort),
    DATABASE_URL: join(dir, "marquee.db"),
    MEDIA_DIR: join(dir, "media"),
    PUBLIC_URL: `http://localhost:${port}`,
    AUTH_URL: `http://localhost:${authPort}`,
    REDIS_URL: "",
    ...extraEnv,
  };
  const bin = join(root, "bin", "marquee");
  execFileSync(bin, ["seed-demo"], { env, cwd: root, stdio: "pipe" });
  const child = spawn(bin, ["serve"], { env, cwd: root, stdio: ["ignore", "inherit", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const base = `http://localhost:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      const res = await fetch(base + "/healthz");
      if (res.ok) break;
    } catch {}
    if (child.exitCode !== null) throw new Error("server exited: " + stderr);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    auth: `http://localhost:${authPort}`,
    env,
    logs: () => stderr,
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", resolve);
        child.kill("SIGTERM");
      }),
  };
}

export async function launchBrowser() {
  mkdirSync(screenshotDir, { recursive: true });
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
}
