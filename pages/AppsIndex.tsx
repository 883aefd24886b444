import type { PageProps } from "./lib/types";

// AppsIndex is the creator-template placeholder at /apps.
export default function AppsIndex(_: PageProps) {
  return (
    <main className="page placeholder">
      <h1>Marquee</h1>
      <p>This is the home of a creator app template.</p>
      <p>
        Open <code>/apps/{"{appName}"}</code> to visit an app, for example <a href="/apps/demo">/apps/demo</a>.
      </p>
    </main>
  );
}

export function head() {
  return (
    <>
      <title>Marquee</title>
      <meta name="description" content="White-label apps for creators. Open /apps/{appName} to visit an app." />
    </>
  );
}
