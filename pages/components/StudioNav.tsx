import { displayTitle } from "./Header";
import type { AppView, ViewerProps } from "../lib/types";
import { appBase } from "../lib/links";

// STUDIO_SECTIONS is the studio's one navigation: every studio screen
// renders StudioNav, so the tabs are the same everywhere. A new screen adds
// one line here (key = the section its page passes as `current`).
// `who`: "manage" (creator and admins; the default), "moderate"
// (moderators too) or "creator" (the creator alone).
export const STUDIO_SECTIONS: { key: string; label: string; path: string; who?: "moderate" | "creator" }[] = [
  { key: "launch", label: "Launch", path: "/studio/launch" },
  { key: "profile", label: "Profile & look", path: "/studio" },
  { key: "theme", label: "Theme", path: "/studio/theme" },
  { key: "features", label: "Features", path: "/studio/features" },
  { key: "plans", label: "Plans", path: "/studio/plans" },
  { key: "offers", label: "Offers", path: "/studio/offers" },
  { key: "members", label: "Members", path: "/studio/members" },
  { key: "orders", label: "Orders", path: "/manage/orders" },
  { key: "donations", label: "Donations", path: "/donations" },
  { key: "analytics", label: "Analytics", path: "/studio/analytics" },
  { key: "payouts", label: "Payouts", path: "/studio/payouts" },
  { key: "paypal", label: "PayPal", path: "/studio/paypal" },
  { key: "newsletter", label: "Newsletter", path: "/studio/newsletter" },
  { key: "shipping", label: "Shipping", path: "/studio/shipping" },
  { key: "domain", label: "Domain", path: "/studio/domain" },
  { key: "data", label: "Export & delete", path: "/studio/data", who: "creator" },
  { key: "moderation", label: "Moderation", path: "/studio/moderation", who: "moderate" },
];

// StudioNav is the studio's heading and tabs. Moderators, who may open
// only the moderation screen, see that tab alone.
export function StudioNav({ app, viewer, current, title = "Studio" }: { app: AppView; viewer: ViewerProps; current: string; title?: string }) {
  const base = appBase(app);
  const manage = viewer.permissions.canManage;
  const creator = viewer.role === "CREATOR";
  const sections = STUDIO_SECTIONS.filter((s) => (s.who === "creator" ? creator : manage || s.who === "moderate"));
  return (
    <>
      <div className="studio-head">
        <a className="back-button" href={base || "/"}>← {displayTitle(app)}</a>
        <h1 className="page-title">{title}</h1>
      </div>
      <nav className="studio-nav" aria-label="Studio sections">
        {sections.map((s) => (
          <a key={s.key} href={base + s.path} className={"chip" + (current === s.key ? " selected" : "")}
            aria-current={current === s.key ? "page" : undefined}>
            {s.label}
          </a>
        ))}
      </nav>
      {manage && (
        <nav className="studio-links" aria-label="Content">
          <a href={base + "/store"}>Items</a>
          <a href={base + "/store/items/new"}>New item</a>
          <a href={base + "/events"}>Events</a>
          <a href={base + "/create-event"}>New event</a>
          <a href={base + "/community"}>Posts</a>
        </nav>
      )}
    </>
  );
}
