import { useState } from "react";
import type { MediaView } from "../pages/lib/types";
import { api, type Body } from "./lib/api";
import { checkFile, uploadFile } from "./lib/upload";
import { useHydrated } from "./lib/hydrated";

export interface CreateFormProps {
  appId: string;
  communityId: string;
  allowed: boolean; // canPost or canCreateStories, decided on the server
  canFeature: boolean;
  communityHref: string;
  // The form's target without JavaScript, and its answer after a refusal.
  action: string;
  error?: string;
  content?: string;
  // Publishing choices for the creator and admins (server/community_post.go):
  // now, a draft, or at a time in the app's time zone; and the newsletter.
  canSchedule?: boolean;
  canNewsletter?: boolean;
  timeZone?: string;
  when?: string;
  publishAt?: string;
  newsletter?: boolean;
  // The access selector: who may read the post (PUBLIC, FOLLOWERS,
  // MEMBERS or TIER:<tier id>), the app's default chosen.
  accessOptions?: { value: string; label: string }[];
  access?: string;
}

type Upload = { state: "none" } | { state: "selected" | "uploading"; preview: string; file: File } | { state: "uploaded"; preview: string; file: File; media: MediaView };

// MediaPicker selects one image or video and uploads it at once; its state
// goes selected -> uploading -> uploaded (SPEC.md section 4).
export function useUpload(appId: string, mediaKey: string, pathPrefix?: string) {
  const [upload, setUpload] = useState<Upload>({ state: "none" });
  const [error, setError] = useState("");
  async function pick(file: File | undefined) {
    setError("");
    if (!file) return;
    const bad = checkFile(file, mediaKey);
    if (bad) {
      setError(bad);
      return;
    }
    const preview = URL.createObjectURL(file);
    setUpload({ state: "uploading", preview, file });
    try {
      const media = await uploadFile(file, { appId, mediaKey, pathPrefix });
      setUpload({ state: "uploaded", preview, file, media });
    } catch (err) {
      setUpload({ state: "none" });
      setError(err instanceof Error && err.message ? err.message : "Upload failed");
    }
  }
  return { upload, error, setError, pick, clear: () => setUpload({ state: "none" }) };
}

export function MediaField({ upload, onPick, onClear, label }: { upload: Upload; onPick: (f: File | undefined) => void; onClear: () => void; label: string }) {
  return (
    <div className="media-field">
      {upload.state === "none" ? (
        <label className="media-pick">
          <span>{label}</span>
          <input type="file" name="media" accept="image/*,video/*" onChange={(e) => onPick(e.target.files?.[0])} />
        </label>
      ) : (
        <div className="media-preview">
          {upload.file.type.startsWith("video/") ? <video src={upload.preview} muted playsInline /> : <img src={upload.preview} alt="Selected media" />}
          <span className="media-status" data-state={upload.state}>
            {upload.state === "uploading" ? "Uploading..." : "Uploaded"}
          </span>
          <button type="button" className="button button-secondary" onClick={onClear} disabled={upload.state === "uploading"}>
            Remove
          </button>
        </div>
      )}
    </div>
  );
}

// accessBody is the access selector's choice as the post API takes it
// (TIER:<id> is MEMBERS from that tier up; empty keeps the app's default).
type Access = NonNullable<Body<"POST", "/api/messages">["access"]>;

export function accessBody(audience: string, teaser: string) {
  if (!audience) return { teaser };
  // audience is an option of AccessField: an Access audience or TIER:<id>.
  const access: Access = audience.startsWith("TIER:")
    ? { audience: "MEMBERS", minTierId: audience.slice(5) }
    : { audience: audience as Access["audience"], minTierId: null };
  return { teaser, access };
}

// AccessField: who may read a post or story, and the teaser everyone else
// sees; plain form fields (access, teaser) without JavaScript.
export function AccessField(props: {
  options?: { value: string; label: string }[];
  audience: string;
  onAudience: (v: string) => void;
  teaser: string;
  onTeaser: (v: string) => void;
  idPrefix: string;
}) {
  if (!props.options || props.options.length === 0) return null;
  return (
    <div className="field access-field">
      <label htmlFor={props.idPrefix + "-access"}>Who can see it</label>
      <select id={props.idPrefix + "-access"} name="access" value={props.audience} onChange={(e) => props.onAudience(e.target.value)} data-testid={props.idPrefix + "-access"}>
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      <label htmlFor={props.idPrefix + "-teaser"}>Teaser for everyone else (optional)</label>
      <input id={props.idPrefix + "-teaser"} name="teaser" maxLength={500} value={props.teaser} onChange={(e) => props.onTeaser(e.target.value)} />
    </div>
  );
}

export default function CreatePostForm(props: CreateFormProps) {
  const { upload, error: uploadError, pick, clear } = useUpload(props.appId, "post");
  const [content, setContent] = useState(props.content ?? "");
  const [featured, setFeatured] = useState(false);
  const [newsletter, setNewsletter] = useState(props.newsletter ?? false);
  const [audience, setAudience] = useState(props.access ?? "");
  const [teaser, setTeaser] = useState("");
  const [when, setWhen] = useState(props.when || "now");
  const [publishAt, setPublishAt] = useState(props.publishAt ?? "");
  const [creating, setCreating] = useState(false);
  const hydrated = useHydrated();
  const [error, setError] = useState(props.error ?? "");
  const uploading = upload.state === "uploading" || upload.state === "selected";

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setError("");
    if (!props.allowed || !props.communityId) {
      setError("Cannot create post: insufficient permissions or community not loaded");
      return;
    }
    if (uploading || creating) return;
    const text = content.trim();
    const attachmentIds = upload.state === "uploaded" ? [upload.media.id] : [];
    if (!text && attachmentIds.length === 0) {
      setError("Please add some content or media to your post");
      return;
    }
    if (when === "schedule" && !publishAt) {
      setError("Choose a date and time to publish the post");
      return;
    }
    setCreating(true);
    try {
      const post = await api("POST", "/api/messages", {
        body: {
          content: text,
          type: "POST",
          attachmentIds,
          communityId: props.communityId,
          isFeatured: props.canFeature && featured,
          newsletter: !!props.canNewsletter && newsletter,
          draft: !!props.canSchedule && when === "draft",
          publishAt: props.canSchedule && when === "schedule" ? publishAt : "",
          ...accessBody(audience, teaser),
        },
        fallback: "Failed to create post",
      });
      // A saved post is seen on its page, marked draft or scheduled.
      window.location.href = post.hidden ? props.communityHref.replace(/\/community$/, "/posts/" + post.id) : props.communityHref;
    } catch (err) {
      setError(err instanceof Error && err.message ? err.message : "Failed to create post");
      setCreating(false);
    }
  }

  if (!props.allowed)
    return (
      <p className="state state-error" role="alert">
        {props.error || "Cannot create post: insufficient permissions or community not loaded"}
      </p>
    );
  return (
    <form className="create-form" method="post" action={props.action} encType="multipart/form-data" onSubmit={submit} data-hydrated={hydrated ? "true" : undefined}>
      <label className="visually-hidden" htmlFor="post-content">
        What's on your mind?
      </label>
      <textarea id="post-content" name="content" rows={5} placeholder="What's on your mind?" value={content} onChange={(e) => setContent(e.target.value)} maxLength={5000} />
      <MediaField upload={upload} onPick={pick} onClear={clear} label="Add photo or video" />
      <AccessField options={props.accessOptions} audience={audience} onAudience={setAudience} teaser={teaser} onTeaser={setTeaser} idPrefix="post" />
      {props.canFeature && (
        <label className="check">
          <input type="checkbox" name="isFeatured" value="1" checked={featured} onChange={(e) => setFeatured(e.target.checked)} /> Feature this post
        </label>
      )}
      {props.canNewsletter && (
        <label className="check">
          <input type="checkbox" name="newsletter" value="1" checked={newsletter} onChange={(e) => setNewsletter(e.target.checked)} data-testid="newsletter" /> Send by e-mail to
          members who can read it
        </label>
      )}
      {props.canSchedule && (
        <fieldset className="publish-when">
          <legend>Publish</legend>
          <label className="check">
            <input type="radio" name="when" value="now" checked={when === "now"} onChange={() => setWhen("now")} /> Now
          </label>
          <label className="check">
            <input type="radio" name="when" value="schedule" checked={when === "schedule"} onChange={() => setWhen("schedule")} data-testid="when-schedule" /> At a time
          </label>
          <label className="schedule-at">
            <input
              type="datetime-local"
              name="publishAt"
              aria-label="Publish at"
              value={publishAt}
              onChange={(e) => {
                setPublishAt(e.target.value);
                if (e.target.value) setWhen("schedule");
              }}
            />{" "}
            <span className="hint">{(props.timeZone || "UTC") + " time"}</span>
          </label>
          <label className="check">
            <input type="radio" name="when" value="draft" checked={when === "draft"} onChange={() => setWhen("draft")} data-testid="when-draft" /> Save as draft
          </label>
        </fieldset>
      )}
      {(error || uploadError) && (
        <p className="inline-error" role="alert">
          {error || uploadError}
        </p>
      )}
      <button className="button" type="submit" disabled={hydrated && (uploading || creating)}>
        {creating ? "Sharing..." : uploading ? "Uploading..." : when === "draft" ? "Save draft" : when === "schedule" ? "Schedule" : "Share"}
      </button>
    </form>
  );
}
