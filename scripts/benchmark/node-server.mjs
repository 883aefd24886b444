// A Node server that renders pages per request with the same server bundle
// goja runs, for scripts/bench: the comparison a team choosing Node SSR would
// make. Usage: node node-server.mjs bundle critical.css stylesheet-url port routes.json
// routes.json maps a URL path to {page, props}; answers are gzipped per
// request when the client accepts it, as a Node SSR server behind no cache does.
import { readFileSync } from "node:fs";
import http from "node:http";
import vm from "node:vm";
import zlib from "node:zlib";

const [bundle, cssFile, sheetURL, port, routesFile] = process.argv.slice(2);
vm.runInThisContext(readFileSync(bundle, "utf8"), { filename: bundle });
const css = cssFile ? readFileSync(cssFile, "utf8") : "";
const routes = JSON.parse(readFileSync(routesFile, "utf8"));

http
  .createServer((req, res) => {
    const key = (req.headers.cookie ? "member:" : "visitor:") + req.url;
    const route = routes[key];
    if (!route) {
      res.writeHead(404).end();
      return;
    }
    const out = JSON.parse(globalThis.marqueeRender(route.page, route.props));
    const doc = `<!doctype html><html lang="en"><head><meta charset="utf-8">${out.head}<style>${css}</style></head><body>${out.html}${sheetURL ? `<link rel="stylesheet" href="${sheetURL}">` : ""}</body></html>`;
    const headers = { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache" };
    if (/\bgzip\b/.test(req.headers["accept-encoding"] || "")) {
      headers["Content-Encoding"] = "gzip";
      res.writeHead(out.status, headers).end(zlib.gzipSync(doc));
    } else {
      res.writeHead(out.status, headers).end(doc);
    }
  })
  .listen(Number(port), "127.0.0.1");
