// sessionLost handles a 401 from an API call on a page rendered for a
// signed-in viewer (SPEC.md section 8): the member context is gone, so a
// sub-path returns to the app's landing page and the landing page reloads
// as a visitor's. Pages already know the viewer when they render, so this
// replaces a session check on every page load.
export function sessionLost(): void {
  if (typeof window === "undefined") return;
  const m = /^\/apps\/([^/]+)(\/.*)?$/.exec(window.location.pathname);
  if (!m) return;
  if (m[2] && m[2] !== "/") window.location.assign("/apps/" + m[1]);
  else window.location.reload();
}
