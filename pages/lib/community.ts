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
