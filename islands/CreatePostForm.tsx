import { useState } from "react";
import type { MediaView } from "../pages/lib/types";
import { api } from "./lib/api";
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

export default function CreatePostForm(props: CreateFormProps) {
  const { upload, error: uploadError, pick, clear } = useUpload(props.appId, "post");
  const [content, setContent] = useState(props.content ?? "");
  const [featured, setFeatured] = useState(false);
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
    setCreating(true);
    try {
      await api(
        "POST",
        "/api/messages",
        { content: text, type: "POST", attachmentIds, communityId: props.communityId, isFeatured: props.canFeature && featured },
        "Failed to create post",
      );
      window.location.href = props.communityHref;
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
      {props.canFeature && (
        <label className="check">
          <input type="checkbox" name="isFeatured" value="1" checked={featured} onChange={(e) => setFeatured(e.target.checked)} /> Feature this post
        </label>
      )}
      {(error || uploadError) && (
        <p className="inline-error" role="alert">
          {error || uploadError}
        </p>
      )}
      <button className="button" type="submit" disabled={hydrated && (uploading || creating)}>
        {creating ? "Sharing..." : uploading ? "Uploading..." : "Share"}
      </button>
    </form>
  );
}
