import { useRef, useState } from "react";
import { ApiError } from "./lib/api";
import { useHydrated } from "./lib/hydrated";
import { uploadFile } from "./lib/upload";
import { appPath } from "./lib/links";

// StudioImage picks and uploads the app's title image or banner through the
// media flow, then posts the studio's plain image form with the new media
// id. Removing is a plain form too, so it works without JavaScript;
// choosing a file needs it (the upload is a presigned PUT).
export default function StudioImage(props: { appId: string; appName: string; which: "title" | "banner"; label: string; url: string }) {
  const hydrated = useHydrated();
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const media = useRef<HTMLInputElement>(null);
  const action = appPath(props.appName) + "/studio/images";

  async function pick(file: File | undefined) {
    if (!file) return;
    if (!file.type.startsWith("image/")) {
      setError("Please select an image file");
      return;
    }
    setBusy(true);
    setError("");
    try {
      const m = await uploadFile(file, { appId: props.appId, mediaKey: props.which });
      media.current!.value = m.id;
      form.current!.submit();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : "Upload failed");
      setBusy(false);
    }
  }

  return (
    <div className="studio-image" data-hydrated={hydrated || undefined}>
      <p className="label">{props.label}</p>
      {props.url ? <img src={props.url} alt="" className={"studio-image-preview " + props.which} /> : <p className="meta">None yet</p>}
      <form ref={form} method="post" action={action} className="studio-image-form">
        <input type="hidden" name="which" value={props.which} />
        <input ref={media} type="hidden" name="mediaId" defaultValue="" />
        {hydrated ? (
          <label className="button button-secondary">
            {busy ? "Uploading…" : props.url ? "Change" : "Upload"}
            <input type="file" accept="image/*" className="visually-hidden" disabled={busy} onChange={(e) => pick(e.target.files?.[0])} aria-label={"Upload " + props.label} />
          </label>
        ) : null}{" "}
        {props.url && (
          <button type="submit" className="button button-danger">Remove</button>
        )}
      </form>
      {!hydrated && (
        // Without JavaScript the file goes up with a plain multipart post.
        <form method="post" action={action} encType="multipart/form-data" className="studio-image-form studio-image-upload">
          <input type="hidden" name="which" value={props.which} />
          <input type="file" name="file" accept="image/*" required aria-label={"Upload " + props.label} />
          <button type="submit" className="button button-secondary">
            Upload
          </button>
        </form>
      )}
      {error && <p className="field-error" role="alert">{error}</p>}
    </div>
  );
}
