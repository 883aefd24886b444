import { sessionLost } from "./session";
// Shapes and helpers of the community screens (SPEC.md sections 3 and 9),
// shared by pages and islands so server HTML and hydration agree.
import type { MediaView, MessageView, StorePagination } from "./types";

export type { StoryGroup, StoryView } from "./types";

// Pagination is store.Pagination (nextCursor on feeds that have a next page).
export type Pagination = StorePagination;

export const HEART = "❤️";

export function isHeart(reaction: string): boolean {
  return reaction === HEART || reaction === "❤" || reaction.toLowerCase() === "heart";
}

// firstVisual is the media a card or a thumbnail shows.
export function firstVisual(post: MessageView): MediaView | null {
  return post.attachments.find((a) => a.media.type === "IMAGE" || a.media.type === "VIDEO")?.media ?? null;
}

// apiError reads the server's {message} and falls back to the SPEC wording.
export async function apiError(res: Response, fallback: string): Promise<string> {
  if (res.status === 401) sessionLost();
  try {
    const body = await res.json();
    if (body && typeof body.message === "string" && body.message) return body.message;
  } catch {}
  return fallback;
}

// createMessage sends POST /api/messages (a post, story or reply) and returns
// the created message; on failure it throws the server's message, or
// fallback (SPEC.md section 8 wording).
export async function createMessage(body: Record<string, unknown>, fallback: string): Promise<MessageView> {
  const res = await fetch("/api/messages", {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(await apiError(res, fallback));
  const json = await res.json().catch(() => null);
  if (!json?.data) throw new Error(fallback);
  return json.data as MessageView;
}
