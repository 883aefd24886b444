import type { AppView, PageProps } from "./types";
import { appBase } from "./links";

export interface FooterTab {
  key: string;
  label: string;
  href: string;
  active: boolean;
}

export interface FooterProps {
  left: FooterTab[];
  right: FooterTab[];
  drawer: FooterTab[];
  create: { label: string; href: string }[];
  // viewerUnknown: a page shared by the members of a role; the island asks
  // /api/auth/me for the picture.
  profile: { href: string; pictureUrl: string; active: boolean; viewerUnknown: boolean };
}

const labels: Record<string, string> = {
  HOME: "Home",
  COMMUNITY: "Feed",
  STORE: "Store",
  EVENTS: "Events",
  CHAT: "Chat",
};

const paths: Record<string, string> = { HOME: "", COMMUNITY: "/community", STORE: "/store", EVENTS: "/events", CHAT: "/chat" };

export const defaultFooterOrder = ["HOME", "COMMUNITY", "STORE", "EVENTS", "CHAT"];

function enabled(app: AppView, key: string): boolean {
  const f = app.settings.features;
  switch (key) {
    case "HOME":
      return true;
    case "COMMUNITY":
      return f.community.enabled;
    case "STORE":
      return f.store.enabled;
    case "EVENTS":
      return f.events.enabled;
    case "CHAT":
      return f.chat.enabled;
    default:
      return false;
  }
}

// Paths where the footer would cover a form or a full-screen view.
const hiddenPatterns = [
  /\/create-post$/,
  /\/create-story$/,
  /\/create-event$/,
  /\/checkout$/,
  /\/events\/[^/]+$/,
  /\/store\/items\/[^/]+$/,
];

export function footerHidden(path: string): boolean {
  return hiddenPatterns.some((re) => re.test(path));
}

// footerProps lays out the footer as SPEC.md section 2 says: tabs in
// ui.footerOrder, only enabled features; more than 3 tabs put 2 left of
// Create, 1 right and the rest in a drawer; otherwise half on each side.
export function footerProps(app: AppView, props: PageProps): FooterProps {
  const base = appBase(app);
  const order = app.settings.ui.footerOrder?.length ? app.settings.ui.footerOrder : defaultFooterOrder;
  const seen = new Set<string>();
  const tabs: FooterTab[] = [];
  for (const key of order) {
    if (seen.has(key) || !labels[key] || !enabled(app, key)) continue;
    seen.add(key);
    const href = base + paths[key];
    const active = key === "HOME" ? props.path === base : props.path.startsWith(href);
    tabs.push({ key, label: labels[key], href, active });
  }
  let left: FooterTab[], right: FooterTab[], drawer: FooterTab[];
  if (tabs.length > 3) {
    left = tabs.slice(0, 2);
    right = tabs.slice(2, 3);
    drawer = tabs.slice(3);
  } else {
    const half = Math.ceil(tabs.length / 2);
    left = tabs.slice(0, half);
    right = tabs.slice(half);
    drawer = [];
  }
  const p = props.viewer.permissions;
  const create: FooterProps["create"] = [];
  if (p.canPost) create.push({ label: "New Post", href: base + "/create-post" });
  if (p.canCreateStories) create.push({ label: "Add to Story", href: base + "/create-story" });
  if (p.canCreateEvents) create.push({ label: "New Event", href: base + "/create-event" });
  return {
    left,
    right,
    drawer,
    create,
    profile: {
      href: base + "/profile",
      pictureUrl: props.viewer.user?.pictureUrl ?? "",
      active: props.path === base + "/profile",
      viewerUnknown: props.viewer.user !== null && props.viewer.user.id === "",
    },
  };
}
