import { useEffect, useState } from "react";
import DonateModal from "./DonateModal";
import { Icon } from "./lib/icons";
import { useHydrated } from "./lib/hydrated";

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
}

type Panel = "none" | "donate" | "notifications" | "search";


// HeaderActions are the Donate, Notifications and Search buttons of the app
// header. The server rendered this page for a signed-in viewer, so there is
// no session check to repeat here.
export default function HeaderActions(props: HeaderActionsProps) {
  const member = props.signedIn;
  const [panel, setPanel] = useState<Panel>("none");
  const hydrated = useHydrated();

  useEffect(() => {
    if (panel === "none") return;
    const close = (e: KeyboardEvent) => e.key === "Escape" && setPanel("none");
    window.addEventListener("keydown", close);
    return () => window.removeEventListener("keydown", close);
  }, [panel]);

  if (!member) return null;
  const toggle = (p: Panel) => setPanel(panel === p ? "none" : p);

  return (
    <div className="header-actions" data-hydrated={hydrated || undefined}>
      {props.canDonate && (
        // A link to the donation page, so Donate works before and without
        // JavaScript; hydrated, it opens the modal instead.
        <a className="icon-button" aria-label="Donate" href={"/apps/" + props.appName + "/donate"}
          onClick={(e) => { e.preventDefault(); toggle("donate"); }}>
          <Icon name="GIFT" />
        </a>
      )}
      {props.canNotifications && (
        <button type="button" className="icon-button" aria-label="Notifications" onClick={() => toggle("notifications")}>
          <Icon name="BELL" />
        </button>
      )}
      {props.canSearch && (
        <button type="button" className="icon-button" aria-label="Search" onClick={() => toggle("search")}>
          <Icon name="SEARCH" />
        </button>
      )}

      {panel !== "none" && <div className="overlay" onClick={() => setPanel("none")} />}

      {panel === "search" && (
        <div className="search-overlay" role="dialog" aria-label="Search">
          {/* SPEC.md shows only the overlay with a text input; no search call is made. */}
          <input type="search" placeholder="Search" aria-label="Search" autoFocus />
          <button type="button" className="icon-button" aria-label="Close search" onClick={() => setPanel("none")}>
            <Icon name="CLOSE" />
          </button>
        </div>
      )}

      {panel === "notifications" && (
        <aside className="side-panel" role="dialog" aria-label="Notifications">
          <div className="panel-head">
            <h2>Notifications</h2>
            <button type="button" className="icon-button" aria-label="Close notifications" onClick={() => setPanel("none")}>
              <Icon name="CLOSE" />
            </button>
          </div>
          {/* The list, paging and Mark All as Read call
              /api/notifications/unread and /read, which arrive with the
              notifications issue; until then the panel says so. */}
          <p className="empty">Notifications are coming soon.</p>
        </aside>
      )}

      {panel === "donate" && (
        <DonateModal appId={props.appId} appName={props.appName} suggestedAmounts={props.suggestedAmounts} tiers={props.tiers}
          onClose={() => setPanel("none")} />
      )}
    </div>
  );
}
