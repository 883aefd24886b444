// appPath starts a link to one of the app's pages from an island:
// "/apps/{name}" on the main site, "" on the app's own domain (issue 42
// item 3), where its pages live at the root. The server says which: the
// render sets it from the page's app (setOnDomain, pages/server-entry.tsx),
// and in the browser the body carries the class "on-domain"; both agree,
// so hydration matches.
let renderedOnDomain = false;

export function setOnDomain(v: boolean): void {
  renderedOnDomain = v;
}

function onDomain(): boolean {
  if (typeof document !== "undefined" && document.body) return document.body.classList.contains("on-domain");
  return renderedOnDomain;
}

export function appPath(appName: string): string {
  return onDomain() ? "" : "/apps/" + appName;
}
