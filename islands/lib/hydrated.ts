import { useEffect, useState } from "react";

// useHydrated turns true once the island runs in the browser. Islands mark
// their root with it (data-hydrated) so tests and CSS can tell server HTML
// from a live island; the first client render still matches the server's.
export function useHydrated(): boolean {
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  return hydrated;
}
