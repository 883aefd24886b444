import { useSyncExternalStore } from "react";

const never = () => () => {};

// useHydrated is true once the island runs in the browser. Islands mark
// their root with it (data-hydrated) so tests and CSS can tell server HTML
// from a live island. While hydrating server HTML React renders with the
// server's answer (false) and then re-renders with true, so the first
// client render still matches; a component first mounted in the browser
// (a modal opened by a click) is true from its first frame. The state-and-
// effect version rendered such a modal once as if without JavaScript: its
// "needs JavaScript" note flashed, and a test could catch it.
export function useHydrated(): boolean {
  return useSyncExternalStore(
    never,
    () => true,
    () => false,
  );
}
