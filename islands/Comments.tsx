import { useState } from "react";
import type { MessageView } from "../pages/lib/types";
import type { Pagination } from "../pages/lib/community";
import { api } from "./lib/api";
import { Ago } from "../pages/lib/Ago";
import { useHydrated } from "./lib/hydrated";
import { appPath } from "./lib/links";

export interface CommentsProps {
  postId: string;
  appName: string;
  replies: MessageView[];
  pagination: Pagination;
  now: string;
  signedIn: boolean;
  canComment: boolean;
  signInUrl: string;
  // reportBase is the app's report form ("/apps/{app}/report"); each
  // comment links to it.
  reportBase?: string;
  // loadError: the comments could not be loaded ('Failed to fetch comments').
  loadError?: string;
}

// Comments lists the replies of a post and lets members add one.
export default function Comments(props: CommentsProps) {
  const [replies, setReplies] = useState(props.replies);
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();
  const [error, setError] = useState("");

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    const content = text.trim();
    if (!content || busy) return;
    setBusy(true);
    setError("");
    try {
      const reply = await api("POST", "/api/messages", { body: { content, type: "REPLY", parentMessageId: props.postId }, fallback: "Failed to create comment" });
      setReplies((r) => [...r, reply]);
      setText("");
    } catch (err) {
      setError(err instanceof Error && err.message ? err.message : "Failed to create comment");
    }
    setBusy(false);
  }

  return (
    <section className="comments" id="comments" aria-label="Comments" data-hydrated={hydrated ? "true" : undefined}>
      <h2>Comments ({Math.max(replies.length, props.pagination.total)})</h2>
      {props.loadError && replies.length === 0 ? (
        <p className="inline-error" role="alert">
          {props.loadError + " "}
          <a href={appPath(props.appName) + "/posts/" + props.postId}>Retry</a>
        </p>
      ) : replies.length === 0 ? (
        <p className="empty">No comments yet. Be the first to comment!</p>
      ) : (
        <ul className="comment-list">
          {replies.map((r) => (
            <li key={r.id} className="comment">
              <p className="meta">
                <strong>@{r.sender.username}</strong>
                {r.sender.donorTier && <span className="badge tier-badge">{r.sender.donorTier}</span>} · <Ago iso={r.createdAt} now={props.now} />
              </p>
              <p className="comment-text">{r.content}</p>
              {props.reportBase && (
                <a className="report-link" href={props.reportBase + "?type=COMMENT&id=" + r.id}>
                  Report
                </a>
              )}
            </li>
          ))}
        </ul>
      )}
      {!props.signedIn ? (
        <p className="hint">
          <a href={props.signInUrl}>Sign in</a> to comment.
        </p>
      ) : !props.canComment ? (
        <p className="hint">Follow this app to join the conversation.</p>
      ) : (
        <form className="comment-form" method="post" action={appPath(props.appName) + "/posts/" + props.postId + "/comments"} onSubmit={submit}>
          <label className="visually-hidden" htmlFor="comment-text">
            Add a comment
          </label>
          <textarea
            id="comment-text"
            name="content"
            required
            rows={2}
            placeholder="Add a comment..."
            value={text}
            onChange={(e) => setText(e.target.value)}
            maxLength={5000}
          />
          <button className="button" type="submit" disabled={hydrated && (busy || text.trim() === "")}>
            {busy ? "Posting..." : "Post"}
          </button>
          {error && (
            <p className="inline-error" role="alert">
              {error}
            </p>
          )}
        </form>
      )}
    </section>
  );
}
