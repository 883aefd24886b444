import { Img } from "../lib/img";
import type { AppView, MediaView } from "../lib/types";
import { appHref } from "../lib/links";

// displayTitle: the display name, else the upper-cased app name.
export function displayTitle(app: AppView): string {
  return app.settings.basic.displayName || app.name.toUpperCase();
}

// TitleImage is the app's title image at a fixed height (the header's and
// the sign-in card's), its width following its shape. It is always on the
// first screen, so it loads at once; priority where it is the largest paint
// (the sign-in card).
export function TitleImage({ media, alt, height, priority }: { media: MediaView; alt: string; height: number; priority?: boolean }) {
  const width = media.width && media.height ? Math.round((height * media.width) / media.height) : height * 3;
  return <Img className="title-image" media={media} alt={alt} sizes={width + "px"} box={[width, height]} priority={priority} eager />;
}

// Header shows the title image, else the display name, else the upper-cased
// app name, linking home.
export function Header({ app, children }: { app: AppView; children?: React.ReactNode }) {
  const title = displayTitle(app);
  return (
    <header className="app-header">
      <a className="app-title" href={appHref(app)}>
        {app.title ? <TitleImage media={app.title} alt={title} height={32} /> : <span>{title}</span>}
      </a>
      <div className="app-header-actions">{children}</div>
    </header>
  );
}
