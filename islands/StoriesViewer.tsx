import { useCallback, useEffect, useRef, useState } from "react";
import { Img } from "../pages/lib/img";
import type { StoryGroup } from "../pages/lib/community";
import type { MediaView } from "../pages/lib/types";
import { relativeTime } from "../pages/lib/format";
import { useHydrated } from "./lib/hydrated";
import { api, ApiError } from "./lib/api";

export interface StoriesViewerProps {
  groups: StoryGroup[];
  canCreate: boolean;
  createHref: string;
  // reportBase is the app's report form ("/apps/{app}/report"): the viewer
  // links each story to it.
  reportBase: string;
  // openUser opens that member's stories at once: the strip's links
  // (?story=USER_ID) do this without JavaScript, rendered by the server.
  openUser?: string;
  // loadError: the server could not load the strip ('Failed to fetch
  // stories'); Retry reloads the page without JavaScript, and with it asks
  // the stories call again in place (communityId's), whose failure says
  // which: 'Network error while fetching stories' when the server was never
  // reached. retryHref is the page.
  loadError?: string;
  communityId?: string;
  retryHref?: string;
}

export const IMAGE_SECONDS = 15; // SPEC.md section 9
const TICK_MS = 100;

function Avatar({ name, media, size }: { name: string; media?: MediaView; size: number }) {
  // Inline size: the global img rule (height: auto) would turn the circle into an oval.
  if (media) return <Img className="story-avatar" media={media} alt="" sizes={size + "px"} box={[size, size]} style={{ width: size, height: size }} />;
  return (
    <span className="story-avatar story-initial" style={{ width: size, height: size }} aria-hidden="true">
      {name.slice(0, 1).toUpperCase()}
    </span>
  );
}

// StoriesViewer is the strip of round thumbnails and the full-screen viewer
// it opens. The viewer is only ever rendered after a click, so the server
// HTML (strip only) always matches the first client render.
export default function StoriesViewer(props: StoriesViewerProps) {
  const { canCreate, createHref, reportBase, openUser } = props;
  const [groups, setGroups] = useState(props.groups);
  const [loadError, setLoadError] = useState(props.loadError ?? "");
  const [open, setOpen] = useState<number | null>(() => {
    const i = openUser ? groups.findIndex((g) => g.user.id === openUser) : -1;
    return i >= 0 ? i : null;
  });
  const hydrated = useHydrated();

  async function retry(e: React.MouseEvent) {
    if (!props.communityId) return;
    e.preventDefault();
    try {
      const data = await api("GET", "/api/community/{communityId}/stories", { params: { communityId: props.communityId } });
      setGroups(data.users);
      setLoadError("");
    } catch (err) {
      setLoadError(err instanceof ApiError && err.status === 0 ? "Network error while fetching stories" : "Failed to fetch stories");
    }
  }

  const failed = loadError && (
    <p className="inline-error stories-error" role="alert">
      {loadError + " "}
      <a href={props.retryHref} onClick={retry}>
        Retry
      </a>
    </p>
  );
  if (groups.length === 0 && !canCreate) return failed || null;
  return (
    <section className="stories" aria-label="Stories" data-hydrated={hydrated ? "true" : undefined}>
      {failed}
      <ul className="story-strip">
        {canCreate && (
          <li>
            <a className="story-thumb story-add" href={createHref}>
              <span className="story-ring story-ring-add" aria-hidden="true">
                +
              </span>
              <span className="story-name">Add story</span>
            </a>
          </li>
        )}
        {groups.map((g, i) => {
          const thumb = g.stories.find((s) => s.media?.type === "IMAGE")?.media ?? undefined;
          return (
            <li key={g.user.id}>
              <a
                className="story-thumb"
                href={"?story=" + encodeURIComponent(g.user.id)}
                onClick={(e) => {
                  e.preventDefault();
                  setOpen(i);
                }}
              >
                <span className="story-ring">
                  <Avatar name={g.user.username} media={thumb} size={60} />
                </span>
                <span className="story-name"><span className="visually-hidden">Open stories of </span>{g.user.username}</span>
                {g.stories.length > 1 && <span className="story-count">{`${g.stories.length} stories`}</span>}
              </a>
            </li>
          );
        })}
      </ul>
      {open !== null && groups[open] && <Viewer group={groups[open]} onClose={() => setOpen(null)} reportBase={reportBase} />}
    </section>
  );
}

function Viewer({ group, onClose, reportBase }: { group: StoryGroup; onClose: () => void; reportBase: string }) {
  const [index, setIndex] = useState(0);
  const [elapsed, setElapsed] = useState(0); // ms shown of the current image
  const [paused, setPaused] = useState(false);
  const [held, setHeld] = useState(false); // hover or touch
  const [loaded, setLoaded] = useState(false);
  const [muted, setMuted] = useState(true);
  const [videoProgress, setVideoProgress] = useState(0);
  const videoRef = useRef<HTMLVideoElement>(null);
  const [now] = useState(() => new Date().toISOString());
  // Without JavaScript (the server's render) nothing reports the load.
  const hydrated = useHydrated();

  const stories = group.stories;
  const story = stories[index];
  const media = story?.media ?? null;
  const isVideo = media?.type === "VIDEO";

  // Moving to another story resets its clock in the same update: resetting
  // in an effect afterwards left one render where the new index met the old
  // elapsed time (15 s), which skipped a story (1 of 3 -> 3 of 3) or closed
  // the viewer before the second of two.
  const goTo = useCallback((i: number) => {
    setIndex(i);
    setElapsed(0);
    setLoaded(false);
    setVideoProgress(0);
  }, []);
  const next = useCallback(() => {
    if (index >= stories.length - 1) onClose();
    else goTo(index + 1);
  }, [index, stories.length, onClose, goTo]);
  const prev = useCallback(() => {
    if (index <= 0) onClose();
    else goTo(index - 1);
  }, [index, onClose, goTo]);

  // The image timer runs only while the image is shown and nothing holds it.
  const running = !!media && !isVideo && loaded && !paused && !held;
  useEffect(() => {
    if (!running) return;
    const t = setInterval(() => setElapsed((e) => e + TICK_MS), TICK_MS);
    return () => clearInterval(t);
  }, [running, index]);
  useEffect(() => {
    if (elapsed >= IMAGE_SECONDS * 1000) next();
  }, [elapsed, next]);

  // Without media there is nothing to wait for: the story still advances.
  useEffect(() => {
    if (!media) setLoaded(true);
  }, [media]);
  useEffect(() => {
    if (media || paused || held) return;
    const t = setInterval(() => setElapsed((e) => e + TICK_MS), TICK_MS);
    return () => clearInterval(t);
  }, [media, paused, held, index]);

  useEffect(() => {
    const v = videoRef.current;
    if (!v) return;
    if (paused || held) v.pause();
    else v.play().catch(() => {});
  }, [paused, held, index, loaded]);

  useEffect(() => {
    function onKey(e: KeyboardEvent) {
      if (e.key === "Escape") onClose();
      else if (e.key === "ArrowRight") next();
      else if (e.key === "ArrowLeft") prev();
    }
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [next, prev, onClose]);

  function onStageClick(e: React.MouseEvent<HTMLDivElement>) {
    const r = e.currentTarget.getBoundingClientRect();
    if (e.clientX - r.left < r.width / 2) prev();
    else next();
  }

  const progress = isVideo ? videoProgress : Math.min(1, elapsed / (IMAGE_SECONDS * 1000));
  const avatar = group.user.media[0];

  return (
    <div className="story-viewer" role="dialog" aria-modal="true" aria-label={"Stories of " + group.user.username}>
      <div className="story-progress">
        {stories.map((s, i) => (
          <span key={s.id} className="story-progress-track">
            <span
              className="story-progress-fill"
              style={{ width: (i < index ? 100 : i === index ? Math.round(progress * 100) : 0) + "%" }}
            />
          </span>
        ))}
      </div>
      <div className="story-top">
        <Avatar name={group.user.username} media={avatar} size={36} />
        <div className="story-who">
          <strong>{group.user.username}</strong>
          <time dateTime={story.createdAt}>{relativeTime(story.createdAt, now)}</time>
        </div>
        <span className="story-counter">
          {index + 1} of {stories.length}
        </span>
        {!isVideo && media && <span className="story-timer">{IMAGE_SECONDS}s</span>}
        <button type="button" className="story-icon" onClick={() => setPaused(!paused)} aria-label={paused ? "Play" : "Pause"}>
          {paused ? "▶" : "❚❚"}
        </button>
        {isVideo && (
          <button type="button" className="story-icon" onClick={() => setMuted(!muted)} aria-label={muted ? "Unmute" : "Mute"}>
            {muted ? "🔇" : "🔊"}
          </button>
        )}
        <a className="story-report" href={reportBase + "?type=STORY&id=" + encodeURIComponent(story.id)} data-testid="report-story">
          Report
        </a>
        <a
          className="story-icon story-close"
          href="?"
          onClick={(e) => {
            e.preventDefault();
            onClose();
          }}
          aria-label="Close"
        >
          ✕
        </a>
      </div>
      <div
        className="story-stage"
        onClick={onStageClick}
        onMouseEnter={() => setHeld(true)}
        onMouseLeave={() => setHeld(false)}
        onTouchStart={() => setHeld(true)}
        onTouchEnd={() => setHeld(false)}
        onTouchCancel={() => setHeld(false)}
      >
        {!media ? (
          <p className="story-fallback">No media content</p>
        ) : isVideo ? (
          <video
            key={story.id}
            ref={videoRef}
            src={media.signedUrl}
            muted={muted}
            playsInline
            autoPlay
            onCanPlay={() => setLoaded(true)}
            onTimeUpdate={(e) => {
              const v = e.currentTarget;
              if (v.duration > 0) setVideoProgress(v.currentTime / v.duration);
            }}
            onEnded={next}
          />
        ) : (
          <Img key={story.id} media={media} alt={story.content || "Story"} sizes="100vw" onLoad={() => setLoaded(true)} onError={() => setLoaded(true)} />
        )}
        {media && !loaded && hydrated && <p className="story-fallback">Loading story...</p>}
        {story.content && <p className="story-caption">{story.content}</p>}
        <p className="story-hint">Click left/right to navigate</p>
      </div>
    </div>
  );
}
