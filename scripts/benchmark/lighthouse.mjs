// Lighthouse (mobile preset: a mid-range phone on slow 4G, simulated
// throttling) against pages already being served, for scripts/bench:
//   node lighthouse.mjs http://127.0.0.1:PORT/apps/demo ...
// Prints one line per page: the performance score and its metrics. Runs
// offline: Lighthouse only loads the given URLs, and the Chromium is the
// system's (CHROME_PATH, default /usr/bin/chromium).
// `make lighthouse` (scripts/lighthouse) covers every page and category.
import lighthouse from "lighthouse";
import { launchChrome } from "../lighthouse/pages.mjs";

const urls = process.argv.slice(2);
if (urls.length === 0) {
  console.error("usage: node lighthouse.mjs URL...");
  process.exit(2);
}
const chrome = await launchChrome();
const seconds = (audit) => (audit.numericValue / 1000).toFixed(2) + " s";
try {
  for (const url of urls) {
    // The default config is the mobile preset with simulated throttling.
    const result = await lighthouse(url, { port: chrome.port, onlyCategories: ["performance"], logLevel: "error" });
    const { categories, audits } = result.lhr;
    const score = Math.round(categories.performance.score * 100);
    console.log(
      `${new URL(url).pathname}: performance ${score}, LCP ${seconds(audits["largest-contentful-paint"])}, ` +
        `FCP ${seconds(audits["first-contentful-paint"])}, TBT ${Math.round(audits["total-blocking-time"].numericValue)} ms, ` +
        `CLS ${audits["cumulative-layout-shift"].numericValue.toFixed(3)}, ` +
        `${Math.round(audits["total-byte-weight"].numericValue / 1024)} KB transferred`,
    );
  }
} finally {
  await chrome.kill();
}
