// The server bundle: goja evaluates this once per runtime, then Go calls
// globalThis.marqueeRender(page, propsJSON) for every request.
import { createElement } from "react";
import { renderToStaticMarkup, renderToString } from "react-dom/server";
import { collectedIslands, lazyIslands, resetIslands } from "./lib/Island";
import { takeChanges } from "./lib/changes";
import { setOnDomain } from "../islands/lib/links";
import { pages } from "./registry";

type RenderOutput = {
  html: string;
  head: string;
  status: number;
  islands: string[];
  lazy: string[];
  critical: boolean;
  // changesAt: when, in ms since the epoch, the clock alone would change
  // what the page shows (0: nothing seen); otherChangesAt: the same but for
  // relative times; ago: the relative times shown (lib/changes.ts).
  changesAt: number;
  otherChangesAt: number;
  ago: number;
};

function marqueeRender(name: string, propsJSON: string): string {
  const page = Object.prototype.hasOwnProperty.call(pages, name) ? pages[name] : undefined;
  if (!page) throw new Error("unknown page: " + name);
  // Under goja the engine's native parse (render/natives.go); Node has none.
  const g = globalThis as any;
  const props = typeof g.__marqueeParse === "function" ? g.__marqueeParse(propsJSON) : JSON.parse(propsJSON);
  resetIslands();
  takeChanges();
  // Islands' links follow the page's site: the app's own domain or not.
  setOnDomain(!!props?.app?.onDomain);
  const html = renderToString(createElement(page.component, props));
  const headEl = page.head ? page.head(props) : null;
  const out: RenderOutput = {
    html,
    head: headEl ? renderToStaticMarkup(headEl) : "",
    status: page.status ? page.status(props) : 200,
    islands: collectedIslands().slice(),
    lazy: lazyIslands(),
    critical: page.criticalCSS === true,
    ...takeChanges(),
  };
  return JSON.stringify(out);
}

(globalThis as any).marqueeRender = marqueeRender;
