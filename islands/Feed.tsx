import { useState } from "react";
import type { MessageView } from "../pages/lib/types";
import { firstVisual, isHeart, unlockOf, type Pagination } from "../pages/lib/community";
import { truncate } from "../pages/lib/format";
import { Ago } from "../pages/lib/Ago";
import { FULL_WIDTH, Img } from "../pages/lib/img";
import { ApiError, api } from "./lib/api";
import { useHydrated } from "./lib/hydrated";
import { Icon } from "./lib/icons";

// The first page's posts are server HTML outside the island (Community.tsx,
// FeedList): only their ids travel as props, so the page does not carry the
// feed twice (once as HTML, once as JSON).
export interface FeedProps {
  communityId: string;
  shownIds: string[];
  pagination: Pagination;
  base: string;
  now: string;
}

// FeedList is the server-rendered first page.
export function FeedList({ posts, base, now }: { posts: MessageView[]; base: string; now: string }) {
  if (posts.length === 0) return <p className="empty feed-empty">No posts yet. Be the first to share something!</p>;
  const firstPicture = posts.find((p) => firstVisual(p)?.type === "IMAGE");
  return (
    <ul className="feed feed-first">
      {posts.map((p) => (
        // The first picture of the feed is the first screen's largest paint.
        <PostCard key={p.id} post={p} base={base} now={now} priority={p === firstPicture} />
      ))}
    </ul>
  );
}

// PostCard: posts with media show the picture, 26 characters and 3 tags;
// text posts show 100 characters and 5 tags (SPEC.md section 9).
export function PostCard({ post, base, now, priority }: { post: MessageView; base: string; now: string; priority?: boolean }) {
  const visual = firstVisual(post);
  const hearts = post.reactions.filter((r) => isHeart(r.reaction)).length;
  const tags = post.tags.slice(0, visual ? 3 : 5);
  return (
    <li className={"feed-card " + (visual ? "feed-card-media" : "feed-card-text")}>
      <a href={base + "/posts/" + post.id}>
        {visual &&
          (visual.type === "VIDEO" ? (
            <video src={visual.signedUrl} muted playsInline preload="metadata" className="feed-visual" />
          ) : (
            <Img media={visual} alt="" sizes={FULL_WIDTH} box={[720, 720]} className="feed-visual" priority={priority} />
          ))}
        <div className="feed-body">
          <p className="meta">
            <strong>@{post.sender.username}</strong>
            {post.sender.donorTier && <span className="badge tier-badge">{post.sender.donorTier}</span>} · <Ago iso={post.createdAt} now={now} />
            {post.isFeatured && <span className="badge">Featured</span>}
            {post.locked && (
              <span className="badge locked-badge" data-testid="locked-badge">
                <span aria-hidden="true">🔒 </span>
                {unlockOf(post, base).badge}
              </span>
            )}
          </p>
          {post.hidden && (
            <p className="hidden-mark" role="status" data-testid="hidden-mark">
              {post.hidden === "PENDING"
                ? "Waiting for approval: only you can see it"
                : post.hidden === "DRAFT"
                  ? "Draft: only you and the staff can see it"
                  : post.hidden === "SCHEDULED"
                    ? "Scheduled: only you and the staff can see it"
                    : "Hidden pending review: only you can see it"}
            </p>
          )}
          {post.content && <p className="post-text">{truncate(post.content, visual ? 26 : 100)}</p>}
          {tags.length > 0 && (
            <ul className="tags">
              {tags.map((t) => (
                <li key={t.id}>#{t.name}</li>
              ))}
            </ul>
          )}
          <p className="meta counts">
            <span aria-label={hearts + " likes"}>♥ {hearts}</span>
            <span className="count-comments" aria-label={post._count.replies + " comments"}>
              <Icon name="COMMUNITY" size={14} /> {post._count.replies}
            </span>
          </p>
        </div>
      </a>
    </li>
  );
}

// Feed appends later pages below the server's first page while the server
// says hasNext.
export default function Feed(props: FeedProps) {
  const [posts, setPosts] = useState<MessageView[]>([]);
  const [pagination, setPagination] = useState(props.pagination);
  const [loading, setLoading] = useState(false);
  const hydrated = useHydrated();
  const [error, setError] = useState("");

  // The next page is asked for by cursor (the last post seen), so posts
  // added or deleted meanwhile neither repeat nor go missing.
  const next = "?page=" + (pagination.page + 1) + (pagination.nextCursor ? "&cursor=" + encodeURIComponent(pagination.nextCursor) : "");

  async function loadMore() {
    setLoading(true);
    setError("");
    try {
      const data = await api("GET", "/api/community/{communityId}/posts", {
        params: { communityId: props.communityId },
        query: { page: pagination.page + 1, cursor: pagination.nextCursor || undefined, limit: pagination.limit || 20, type: "POST" },
      });
      const seen = new Set([...props.shownIds, ...posts.map((p) => p.id)]);
      setPosts([...posts, ...data.posts.filter((p) => !seen.has(p.id))]);
      setPagination(data.pagination);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 0 ? "Network error while fetching posts" : "Failed to fetch posts");
    }
    setLoading(false);
  }

  return (
    <>
      <ul className="feed feed-more" data-hydrated={hydrated ? "true" : undefined}>
        {posts.map((p) => (
          <PostCard key={p.id} post={p} base={props.base} now={props.now} />
        ))}
      </ul>
      {error && (
        <p className="inline-error" role="alert">
          {error}
        </p>
      )}
      {pagination.hasNext && (
        <div className="load-more">
          {/* A link, so the next page opens even without JavaScript; with it,
              the page is appended in place. */}
          <a
            className="button button-secondary"
            href={next}
            aria-disabled={loading}
            onClick={(e) => {
              e.preventDefault();
              if (!loading) loadMore();
            }}
          >
            {loading ? "Loading..." : "Load More Posts"}
          </a>
        </div>
      )}
    </>
  );
}
