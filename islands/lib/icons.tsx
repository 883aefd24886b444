// Small inline SVG icons shared by pages and islands (no icon font to load).
import type { ReactElement } from "react";

const paths: Record<string, string> = {
  HOME: "M3 11l9-8 9 8v10a1 1 0 0 1-1 1h-5v-7H9v7H4a1 1 0 0 1-1-1z",
  COMMUNITY: "M4 5h16v11H8l-4 4z",
  STORE: "M5 8h14l-1 12H6zM9 8V6a3 3 0 0 1 6 0v2",
  EVENTS: "M4 6h16v14H4zM4 10h16M8 3v5M16 3v5",
  CHAT: "M21 12a8 8 0 0 1-12 7l-5 1 1-4a8 8 0 1 1 16-4z",
  PLUS: "M12 5v14M5 12h14",
  USER: "M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM4 21a8 8 0 0 1 16 0",
  MORE: "M6 15l6-6 6 6",
  GIFT: "M3 9h18v4H3zM5 13h14v8H5zM12 9v12M12 9c-2-4-6-4-6-1s4 1 6 1c2 0 6 2 6-1s-4-3-6 1",
  BELL: "M6 16V11a6 6 0 0 1 12 0v5l2 2H4zM10 20a2 2 0 0 0 4 0",
  SEARCH: "M11 18a7 7 0 1 0 0-14 7 7 0 0 0 0 14zM21 21l-5-5",
  CLOSE: "M6 6l12 12M18 6L6 18",
};

export function Icon({ name, size = 22 }: { name: string; size?: number }): ReactElement {
  return (
    <svg width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2"
      strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" focusable="false">
      <path d={paths[name] ?? paths.MORE} />
    </svg>
  );
}
