import type { ComponentType } from "react";

// The marker element is a custom element so the browser gives it no meaning;
// CSS sets `marquee-island { display: contents }` so it never affects layout.
declare module "react" {
  namespace JSX {
    interface IntrinsicElements {
      "marquee-island": {
        "data-island": string;
        "data-props": string;
        "data-when": string;
        children?: React.ReactNode;
      };
    }
  }
}

export type When = "load" | "idle" | "visible";

// Names of the islands rendered by the current page. A goja runtime renders
// one page at a time, so a module-level list reset per render is enough.
let rendered: string[] = [];
// eager: islands with at least one instance hydrating on load. The others
// (idle, visible) only add a nicety: their modules are not preloaded, so they
// never compete with the first paint for bandwidth.
let eager = new Set<string>();

export function resetIslands(): void {
  rendered = [];
  eager = new Set();
}

export function collectedIslands(): string[] {
  return rendered;
}

export function lazyIslands(): string[] {
  return rendered.filter((n) => !eager.has(n));
}

// Island renders component on the server inside a marker carrying its name
// and props; the client runtime hydrates it from exactly those props.
// React escapes attribute values (& and " become entities, so "</script>"
// stays inert text inside a quoted attribute); U+2028 has no meaning in HTML
// and JSON.parse accepts it, so any props round-trip through the attribute.
export function Island<P extends object>({
  name,
  component: Component,
  props,
  when,
}: {
  name: string;
  component: ComponentType<P>;
  props: P;
  when?: When;
}) {
  if (!rendered.includes(name)) rendered.push(name);
  if ((when ?? "load") === "load") eager.add(name);
  return (
    <marquee-island data-island={name} data-props={JSON.stringify(props)} data-when={when ?? "load"}>
      <Component {...props} />
    </marquee-island>
  );
}
