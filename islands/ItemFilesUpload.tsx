import { useRef, useState } from "react";
import { api, putBytes, request } from "./lib/api";
import { useHydrated } from "./lib/hydrated";
import { appPath } from "./lib/links";

export interface ItemFilesUploadProps {
  appName: string;
  itemId: string;
  // fileTypes: the extensions the operator allows (the input's accept).
  fileTypes: string;
}

// An upload in progress as the server answers it (server/item_uploads.go).
interface Upload {
  id: string;
  size: number;
  partSize: number;
  partCount: number;
  parts: { number: number; size: number }[];
}

// ItemFilesUpload adds a file a DIGITAL item delivers. Without JavaScript
// it is a plain multipart form (the server spools the file to disk). With
// it, the file goes up in parts with a progress bar; when the network
// fails, the parts already stored stay, and Resume sends only the rest
// (also after a reload: the upload's id is kept in localStorage).
export default function ItemFilesUpload({ appName, itemId, fileTypes }: ItemFilesUploadProps) {
  const hydrated = useHydrated();
  const input = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  const [progress, setProgress] = useState<{ done: number; size: number } | null>(null);
  const [error, setError] = useState("");
  const [paused, setPaused] = useState(false);

  async function send(file: File) {
    const key = "marquee-upload:" + itemId + ":" + file.name + ":" + file.size + ":" + file.lastModified;
    setBusy(true);
    setError("");
    setPaused(false);
    let up: Upload | null = null;
    try {
      const saved = localStorage.getItem(key);
      if (saved) up = await api("GET", "/api/store/items/{itemId}/uploads/{uploadId}", { params: { itemId, uploadId: saved } }).catch(() => null);
      if (!up) {
        up = await api("POST", "/api/store/items/{itemId}/uploads", { params: { itemId }, body: { name: file.name, size: file.size }, fallback: "Upload failed" });
        localStorage.setItem(key, up.id);
      }
      const stored = new Set(up.parts.map((p) => p.number));
      let done = up.parts.reduce((n, p) => n + p.size, 0);
      setProgress({ done, size: file.size });
      for (let n = 1; n <= up.partCount; n++) {
        if (stored.has(n)) continue;
        const part = file.slice((n - 1) * up.partSize, Math.min(n * up.partSize, file.size));
        await putBytes("/api/store/items/{itemId}/uploads/{uploadId}/parts/{number}", { itemId, uploadId: up.id, number: n }, part, "Failed to upload file");
        done += part.size;
        setProgress({ done, size: file.size });
      }
      const out = await request("POST", "/api/store/items/{itemId}/uploads/{uploadId}/complete", { params: { itemId, uploadId: up.id }, fallback: "Upload failed" });
      localStorage.removeItem(key);
      window.location.assign(window.location.pathname + "?notice=" + encodeURIComponent(out.message || "Added " + file.name));
    } catch (err) {
      const status = (err as { status?: number }).status ?? 0;
      // A lost network or a failing server: the stored parts stay.
      if (up && (status === 0 || status >= 500)) {
        setError("Network error during upload. Please check your connection and try again.");
        setPaused(true);
      } else {
        localStorage.removeItem(key);
        setError((err as Error).message || "Upload failed");
      }
      setBusy(false);
    }
  }

  function submit(e: React.FormEvent) {
    e.preventDefault();
    const file = input.current?.files?.[0];
    if (file) void send(file);
  }

  const pct = progress ? Math.floor((progress.done * 100) / Math.max(progress.size, 1)) : 0;
  return (
    <form method="post" action={appPath(appName) + "/store/items/" + itemId + "/files"} encType="multipart/form-data"
      onSubmit={submit} data-hydrated={hydrated || undefined}>
      <label>
        Add a file
        <input ref={input} type="file" name="file" required accept={fileTypes} disabled={busy} />
      </label>
      {progress && (
        <p className="upload-progress">
          <progress value={progress.done} max={progress.size} aria-label="Upload progress" />
          <span role="status">{pct + "%"}</span>
        </p>
      )}
      {error && <p className="inline-error" role="alert">{error}</p>}
      {paused ? (
        <button type="submit" className="button">Resume upload</button>
      ) : (
        <button type="submit" className="button" disabled={busy}>{busy ? "Uploading..." : "Upload file"}</button>
      )}
    </form>
  );
}
