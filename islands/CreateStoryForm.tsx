import { useState } from "react";
import { api } from "./lib/api";
import { AccessField, MediaField, accessBody, useUpload, type CreateFormProps } from "./CreatePostForm";
import { useHydrated } from "./lib/hydrated";

// CreateStoryForm: a story needs uploaded media; the caption is optional.
// Share stays disabled until the upload has finished.
export default function CreateStoryForm(props: CreateFormProps) {
  const { upload, error: uploadError, pick, clear } = useUpload(props.appId, "story");
  const [caption, setCaption] = useState(props.content ?? "");
  const [audience, setAudience] = useState(props.access ?? "");
  const [teaser, setTeaser] = useState("");
  const [creating, setCreating] = useState(false);
  const hydrated = useHydrated();
  const [error, setError] = useState(props.error ?? "");

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setError("");
    if (!props.allowed) {
      setError("Cannot create story: insufficient permissions or community not loaded");
      return;
    }
    if (!props.communityId) {
      setError("Community not loaded");
      return;
    }
    if (upload.state !== "uploaded") {
      setError("No uploaded media");
      return;
    }
    if (creating) return;
    setCreating(true);
    try {
      await api("POST", "/api/messages", {
        body: { content: caption.trim(), type: "STORY", attachmentIds: [upload.media.id], communityId: props.communityId, ...accessBody(audience, teaser) },
        fallback: "Failed to create story",
      });
      window.location.href = props.communityHref;
    } catch (err) {
      setError(err instanceof Error && err.message ? err.message : "Failed to create story");
      setCreating(false);
    }
  }

  if (!props.allowed)
    return (
      <p className="state state-error" role="alert">
        {props.error || "Cannot create story: insufficient permissions or community not loaded"}
      </p>
    );
  return (
    <form className="create-form" method="post" action={props.action} encType="multipart/form-data" onSubmit={submit} data-hydrated={hydrated ? "true" : undefined}>
      <MediaField upload={upload} onPick={pick} onClear={clear} label="Choose a photo or video" />
      <label className="visually-hidden" htmlFor="story-caption">
        Caption
      </label>
      <input id="story-caption" name="content" type="text" placeholder="Add a caption (optional)" value={caption} onChange={(e) => setCaption(e.target.value)} maxLength={500} />
      <AccessField options={props.accessOptions} audience={audience} onAudience={setAudience} teaser={teaser} onTeaser={setTeaser} idPrefix="story" />
      {(error || uploadError) && (
        <p className="inline-error" role="alert">
          {error || uploadError}
        </p>
      )}
      <button className="button" type="submit" disabled={hydrated && (upload.state !== "uploaded" || creating)}>
        {creating ? "Sharing..." : "Share to Story"}
      </button>
    </form>
  );
}
