import { useEffect, useRef, useState } from "react";
import { api } from "./lib/api";
import { HEART, isHeart } from "../pages/lib/community";
import { useHydrated } from "./lib/hydrated";
import { useViewerId } from "./lib/viewer";
import { appPath } from "./lib/links";

export interface LikeButtonProps {
  messageId: string;
  reactions: { id: string; reaction: string; sender: { id: string } }[];
  viewerId: string | null;
  signInUrl: string;
  // The post's page: without JavaScript the button posts its form there.
  appName: string;
}

// LikeButton toggles the viewer's heart optimistically: the count and the
// colour change at once and are put back if the server refuses.
// viewerId "" means a signed-in viewer the shared page does not name: who it
// is (and so whether this post is liked) is asked after hydration.
export default function LikeButton({ messageId, reactions, viewerId: rendered, signInUrl, appName }: LikeButtonProps) {
  const viewerId = useViewerId(rendered);
  const hearts = reactions.filter((r) => isHeart(r.reaction));
  const mine = viewerId ? hearts.find((r) => r.sender.id === viewerId) : undefined;
  const [state, setState] = useState({ count: hearts.length, reactionId: mine?.id ?? null, liked: !!mine });
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();
  const [error, setError] = useState("");
  // touched: the viewer toggled already; a late answer must not undo that.
  const touched = useRef(false);
  useEffect(() => {
    if (rendered !== "" || !viewerId) return;
    // The shared page may be older than the viewer's own heart: once the
    // viewer is known, the reactions are asked for as they are now.
    let live = true;
    api("GET", "/api/messages/{id}/reactions", { params: { id: messageId } })
      .then((list) => {
        const now = list.filter((r) => isHeart(r.reaction));
        const own = now.find((r) => r.sender.id === viewerId);
        if (live && !touched.current) setState({ count: now.length, reactionId: own?.id ?? null, liked: !!own });
      })
      .catch(() => live && setError("Failed to fetch reactions"));
    return () => {
      live = false;
    };
    // Only when the viewer becomes known: later changes are the button's own.
  }, [viewerId]);

  async function toggle(e: React.FormEvent) {
    e.preventDefault();
    if (viewerId === "") return; // still asking who is signed in
    if (!viewerId) {
      window.location.href = signInUrl;
      return;
    }
    if (busy) return;
    touched.current = true;
    const before = state;
    setBusy(true);
    setError("");
    if (before.liked) {
      setState({ count: Math.max(0, before.count - 1), reactionId: null, liked: false });
      try {
        await api("DELETE", "/api/messages/{id}/reactions/{reactionId}", { params: { id: messageId, reactionId: String(before.reactionId) } });
      } catch {
        setState(before);
        setError("Failed to remove reaction");
      }
    } else {
      setState({ count: before.count + 1, reactionId: null, liked: true });
      try {
        const reaction = await api("POST", "/api/messages/{id}/reactions", { params: { id: messageId }, body: { reaction: HEART } });
        setState({ count: before.count + 1, reactionId: reaction.id, liked: true });
      } catch {
        setState(before);
        setError("Failed to add reaction");
      }
    }
    setBusy(false);
  }

  return (
    <span className="like" data-hydrated={hydrated ? "true" : undefined}>
      {/* Without JavaScript the form toggles the heart on the server. */}
      <form method="post" action={appPath(appName) + "/posts/" + messageId + "/like"} onSubmit={toggle}>
        <button
          type="submit"
          className={"like-button" + (state.liked ? " liked" : "")}
          aria-pressed={state.liked}
        >
          {/* The name says the action and the visible count ("Like 5"). */}
          <span aria-hidden="true">{state.liked ? "♥" : "♡"}</span>
          <span className="visually-hidden">{state.liked ? "Remove like" : "Like"}</span> <span className="like-count">{state.count}</span>
        </button>
      </form>
      {error && (
        <span className="inline-error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
