import { useEffect, useState } from "react";
import { Icon } from "./lib/icons";
import { useHydrated } from "./lib/hydrated";
import { NotificationsPanel, SearchOverlay, useUnreadCount } from "./lib/notifications";

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

function dollars(cents: number): string {
  return "$" + (cents % 100 === 0 ? String(cents / 100) : (cents / 100).toFixed(2));
}

// HeaderActions are the Donate, Notifications and Search buttons of the app
// header. The server rendered this page for a signed-in viewer, so there is
// no session check to repeat here.
export default function HeaderActions(props: HeaderActionsProps) {
  const member = props.signedIn;
  const [panel, setPanel] = useState<Panel>("none");
  const [amount, setAmount] = useState("");
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
  const cents = Math.round(parseFloat(amount) * 100);

  return (
    <div className="header-actions" data-hydrated={hydrated ? "true" : undefined}>
      {props.canDonate && (
        <button type="button" className="icon-button" aria-label="Donate" onClick={() => toggle("donate")}>
          <Icon name="GIFT" />
        </button>
      )}
      {/* Bell and Search are links to their pages, so they work before
          hydration and without JavaScript; with it they open the panels. */}
      {props.canNotifications && (
        <a
          href={"/apps/" + props.appName + "/notifications"}
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
          href={"/apps/" + props.appName + "/search"}
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
        <div className="modal" role="dialog" aria-label="Show Your Support">
          <div className="panel-head">
            <h2>Show Your Support</h2>
            <button type="button" className="icon-button" aria-label="Close" onClick={() => setPanel("none")}>
              <Icon name="CLOSE" />
            </button>
          </div>
          {props.suggestedAmounts.length > 0 && (
            <section>
              <h3>Quick Donation</h3>
              <div className="amounts">
                {props.suggestedAmounts.map((a) => (
                  <button key={a} type="button" className="button button-secondary" onClick={() => setAmount((a / 100).toFixed(2))}>
                    {dollars(a)}
                  </button>
                ))}
              </div>
            </section>
          )}
          {props.tiers.length > 0 && (
            <section>
              <h3>Achievement Tiers</h3>
              <ul className="tiers">
                {props.tiers.map((t) => (
                  <li key={t.id}>
                    <strong>{t.name}</strong> <span>{dollars(t.requiredAmount)}</span>
                    {t.description && <p>{t.description}</p>}
                  </li>
                ))}
              </ul>
            </section>
          )}
          <div className="amount-input">
            <span>$</span>
            <input type="number" min="0" step="0.01" inputMode="decimal" aria-label="Custom amount" value={amount}
              onChange={(e) => setAmount(e.target.value)} />
            {/* POST /api/donations/create and /process belong to the
                donations issue; the button stays disabled until then. */}
            <button type="button" className="button" disabled title="Donations open soon">
              Send
            </button>
          </div>
          {amount !== "" && !(cents > 0) && <p className="field-error">Enter an amount above $0</p>}
        </div>
      )}
    </div>
  );
}
