// sessionLost handles a 401 from an API call on a page rendered for a
// signed-in viewer (SPEC.md section 8): the member context is gone, so a
// sub-path returns to the app's landing page and the landing page reloads
// as a visitor's. Pages already know the viewer when they render, so this
// replaces a session check on every page load.
export function sessionLost(): void {
  if (typeof window === "undefined") return;
  const m = /^\/apps\/([^/]+)(\/.*)?$/.exec(window.location.pathname);
  if (!m) return;
  // Once within a few seconds: a 401 that a fresh page still gets is an
  // answer to show, not a session to recover, and must not become a loop.
  try {
    const key = "marquee:session-lost";
    const last = Number(window.sessionStorage.getItem(key) || 0);
    if (Date.now() - last < 10_000) return;
    window.sessionStorage.setItem(key, String(Date.now()));
  } catch {
    // Storage refused (private mode): go on; the server clears the cookie.
  }
  if (m[2] && m[2] !== "/") window.location.assign("/apps/" + m[1]);
  else window.location.reload();
}
