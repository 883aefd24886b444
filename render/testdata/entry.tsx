// Fixture server bundle for render tests: the real server entry's contract
// (globalThis.marqueeRender) with pages that misbehave on purpose.
import { createElement } from "react";
import { renderToStaticMarkup, renderToString } from "react-dom/server";
import { Island, collectedIslands, resetIslands } from "../../pages/lib/Island";

function Fast({ name }: { name: string }) {
  return <main><h1>Hello, {name}</h1></main>;
}

function Loop(): null {
  for (;;) {}
}

function Throws(): null {
  throw new Error("page exploded");
}

function Echo({ text }: { text: string }) {
  return <p className="echo">{text}</p>;
}

function WithIsland({ text }: { text: string }) {
  return (
    <main>
      <Island name="Echo" component={Echo} props={{ text }} when="idle" />
    </main>
  );
}

type Page = {
  component: (props: any) => any;
  head?: (props: any) => any;
  status?: (props: any) => number;
  criticalCSS?: boolean;
};

const pages: Record<string, Page> = {
  Fast: { component: Fast, head: (p) => <title>{p.name}</title> },
  Critical: { component: Fast, criticalCSS: true },
  Loop: { component: Loop },
  Throws: { component: Throws },
  WithIsland: { component: WithIsland, status: () => 201 },
};

(globalThis as any).marqueeRender = (name: string, propsJSON: string): string => {
  const page = pages[name];
  if (!page) throw new Error("unknown page: " + name);
  const props = JSON.parse(propsJSON);
  resetIslands();
  const html = renderToString(createElement(page.component, props));
  const head = page.head ? renderToStaticMarkup(page.head(props)) : "";
  return JSON.stringify({
    html,
    head,
    status: page.status ? page.status(props) : 200,
    islands: collectedIslands(),
    critical: page.criticalCSS === true,
  });
};
