import { useEffect, useState } from "react";
import type { FooterProps, FooterTab } from "../pages/lib/footer";
import { Icon } from "./lib/icons";
import { useViewerPicture } from "./lib/viewer";

function Tab({ tab }: { tab: FooterTab }) {
  return (
    <a className={"footer-tab" + (tab.active ? " active" : "")} href={tab.href} aria-current={tab.active ? "page" : undefined}>
      <Icon name={tab.key} />
      <span>{tab.label}</span>
    </a>
  );
}

// Footer is the bottom navigation. The drawer and the Create menu are
// <details> elements, so they open even before (or without) JavaScript.
export default function Footer(props: FooterProps) {
  const [drawerOpen, setDrawerOpen] = useState(false);
  const [createOpen, setCreateOpen] = useState(false);
  const [hydrated, setHydrated] = useState(false);
  const pictureUrl = useViewerPicture(props.profile.pictureUrl, props.profile.viewerUnknown);
  useEffect(() => setHydrated(true), []);
  useEffect(() => {
    if (!createOpen) return;
    const close = (e: KeyboardEvent) => e.key === "Escape" && setCreateOpen(false);
    window.addEventListener("keydown", close);
    return () => window.removeEventListener("keydown", close);
  }, [createOpen]);

  return (
    <nav className="footer" aria-label="App" data-hydrated={hydrated ? "true" : undefined}>
      {props.drawer.length > 0 && (
        <details className="footer-drawer" open={drawerOpen} onToggle={(e) => setDrawerOpen(e.currentTarget.open)}>
          <summary className="footer-drawer-tab" aria-label={drawerOpen ? "Hide more tabs" : "Show more tabs"}>
            <Icon name="MORE" size={18} />
          </summary>
          <div className="footer-drawer-items">
            {props.drawer.map((t) => (
              <Tab key={t.key} tab={t} />
            ))}
          </div>
        </details>
      )}
      <div className="footer-bar">
        {props.left.map((t) => (
          <Tab key={t.key} tab={t} />
        ))}
        {props.create.length > 0 && (
          <details className="footer-create" open={createOpen} onToggle={(e) => setCreateOpen(e.currentTarget.open)}>
            <summary className="footer-create-button" aria-label="Create">
              <Icon name="PLUS" size={26} />
            </summary>
            <div className="footer-create-menu" role="menu">
              {props.create.map((c) => (
                <a key={c.href} role="menuitem" href={c.href}>
                  {c.label}
                </a>
              ))}
            </div>
          </details>
        )}
        {props.right.map((t) => (
          <Tab key={t.key} tab={t} />
        ))}
        <a className={"footer-tab" + (props.profile.active ? " active" : "")} href={props.profile.href}>
          {pictureUrl ? (
            <img className="footer-avatar" src={pictureUrl} alt="" width={24} height={24} loading="lazy" decoding="async" />
          ) : (
            <Icon name="USER" />
          )}
          <span>Profile</span>
        </a>
      </div>
    </nav>
  );
}
