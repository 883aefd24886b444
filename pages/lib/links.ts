// Links to an app's pages. An app lives under /apps/{name} on the main
// site, or at the root of its own verified domain (issue 42 item 3): the
// server says which on the app a page renders (baseUrl, onDomain), and
// every link a page makes goes through these.

interface AppWhere {
  name: string;
  baseUrl?: string;
  onDomain?: boolean;
}

// appBase starts a relative link to one of the app's pages: "" on its own
// domain, "/apps/{name}" on the main site. appBase(app) + "/community".
export function appBase(app: AppWhere): string {
  return app.onDomain ? "" : "/apps/" + app.name;
}

// appHref is a relative link to the app's page at path ("" is its home).
export function appHref(app: AppWhere, path = ""): string {
  return appBase(app) + path || "/";
}

// appBaseUrl starts an absolute URL of one of the app's pages (canonical
// links, feeds, JSON-LD, share links): its domain's origin, or
// PUBLIC_URL/apps/{name}.
export function appBaseUrl(app: AppWhere, publicUrl: string): string {
  return app.baseUrl || publicUrl + "/apps/" + app.name;
}
