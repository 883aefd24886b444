// Shapes and helpers of the community screens (SPEC.md sections 3 and 9),
// shared by pages and islands so server HTML and hydration agree.
import type { AccessTier, MediaView, MessageAccess, MessageView, StorePagination } from "./types";

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

// unlockOf says how a viewer unlocks a locked post or story: following the
// app (its landing page has the Follow button) or joining a tier (the
// membership page), in the words of the button and of the feed's badge.
// base is the app's path (/apps/{app}); who names the readers in a sentence.
export function unlockOf(post: { access: MessageAccess; accessTier?: AccessTier | null }, base: string): { href: string; action: string; badge: string; who: string } {
  if (post.access.audience === "FOLLOWERS") return { href: base || "/", action: "Follow to unlock", badge: "Followers", who: "followers" };
  if (post.accessTier)
    return { href: base + "/membership", action: "Join " + post.accessTier.name + " to unlock", badge: post.accessTier.name, who: post.accessTier.name + " members and above" };
  return { href: base + "/membership", action: "Become a member to unlock", badge: "Members", who: "members" };
}
