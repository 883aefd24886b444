import { useEffect, useState } from "react";
import DonateModal from "./DonateModal";
import { Icon } from "./lib/icons";
import { useHydrated } from "./lib/hydrated";
import { NotificationsPanel, SearchOverlay, useUnreadCount } from "./lib/notifications";
import { appPath } from "./lib/links";

export interface HeaderActionsProps {
  appId: string;
  appName: string;
  path: string;
  signedIn: boolean;
  // Which buttons show is decided on the server (server/access).
  canDonate: boolean;
  canNotifications: boolean;
  canSearch: boolean;
  suggestedAmounts: number[]; // cents
  tiers: { id: string; name: string; requiredAmount: number; description: string }[];
  // Stripe's publishable key; empty when cards are not configured.
  publishableKey?: string;
}

type Panel = "none" | "donate" | "notifications" | "search";


// HeaderActions are the Donate, Notifications and Search buttons of the app
// header. The server rendered this page for a signed-in viewer, so there is
// no session check to repeat here.
export default function HeaderActions(props: HeaderActionsProps) {
  const member = props.signedIn;
  const [panel, setPanel] = useState<Panel>("none");
  const hydrated = useHydrated();
  const [unread, setUnread] = useUnreadCount(props.appId, props.signedIn && props.canNotifications);

  useEffect(() => {
    if (panel === "none") return;
    const close = (e: KeyboardEvent) => e.key === "Escape" && setPanel("none");
    window.addEventListener("keydown", close);
    return () => window.removeEventListener("keydown", close);
  }, [panel]);

  if (!member) return null;
  const toggle = (p: Panel) => setPanel(panel === p ? "none" : p);

  return (
    <div className="header-actions" data-hydrated={hydrated ? "true" : undefined}>
      {props.canDonate && (
        // A link to the donation page, so Donate works before and without
        // JavaScript; hydrated, it opens the modal instead.
        <a className="icon-button" aria-label="Donate" href={appPath(props.appName) + "/donate"}
          onClick={(e) => { e.preventDefault(); toggle("donate"); }}>
          <Icon name="GIFT" />
        </a>
      )}
      {/* Bell and Search are links to their pages, so they work before
          hydration and without JavaScript; with it they open the panels. */}
      {props.canNotifications && (
        <a
          href={appPath(props.appName) + "/notifications"}
          className="icon-button bell"
          aria-label={unread > 0 ? "Notifications (" + unread + " unread)" : "Notifications"}
          onClick={(e) => {
            e.preventDefault();
            toggle("notifications");
          }}
        >
          <Icon name="BELL" />
          {unread > 0 && <span className="badge-count">{unread > 99 ? "99+" : unread}</span>}
        </a>
      )}
      {props.canSearch && (
        <a
          href={appPath(props.appName) + "/search"}
          className="icon-button"
          aria-label="Search"
          onClick={(e) => {
            e.preventDefault();
            toggle("search");
          }}
        >
          <Icon name="SEARCH" />
        </a>
      )}

      {panel !== "none" && <div className="overlay" onClick={() => setPanel("none")} />}

      {panel === "search" && <SearchOverlay appId={props.appId} appName={props.appName} onClose={() => setPanel("none")} />}

      {panel === "notifications" && (
        <NotificationsPanel appId={props.appId} onClose={() => setPanel("none")} onCount={setUnread} />
      )}

      {panel === "donate" && (
        <DonateModal appId={props.appId} appName={props.appName} suggestedAmounts={props.suggestedAmounts} tiers={props.tiers}
          publishableKey={props.publishableKey} onClose={() => setPanel("none")} />
      )}
    </div>
  );
}
