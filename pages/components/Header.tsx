import type { AppView } from "../lib/types";

// displayTitle: the display name, else the upper-cased app name.
export function displayTitle(app: AppView): string {
  return app.settings.basic.displayName || app.name.toUpperCase();
}

// Header shows the title image, else the display name, else the upper-cased
// app name, linking home.
export function Header({ app, children }: { app: AppView; children?: React.ReactNode }) {
  const title = displayTitle(app);
  return (
    <header className="app-header">
      <a className="app-title" href={"/apps/" + app.name}>
        {app.title ? <img src={app.title.signedUrl} alt={title} height={32} /> : <span>{title}</span>}
      </a>
      <div className="app-header-actions">{children}</div>
    </header>
  );
}
