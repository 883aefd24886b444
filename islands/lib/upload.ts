// The upload flow of SPEC.md section 4: create the media record, PUT the
// file to the presigned URL with its content type, then the media is ready
// to attach. The same code works for S3 and for local disk.
import type { MediaView } from "../../pages/lib/types";

export interface UploadOptions {
  appId?: string;
  mediaKey: string; // profile, story, post, event-banner
  description?: string;
  // pathPrefix labels the object (SPEC.md: media/events/ for events); the
  // server chooses the real key.
  pathPrefix?: string;
}

export class UploadError extends Error {}

const MB = 1024 * 1024;

// checkFile applies the client side of SPEC.md section 5 before any request.
export function checkFile(file: File, mediaKey: string): string | null {
  if (mediaKey === "profile") {
    if (!file.type.startsWith("image/")) return "Please select an image file";
    if (file.size >= 5 * MB) return "File size must be less than 5MB";
    return null;
  }
  if (!file.type.startsWith("image/") && !file.type.startsWith("video/")) return "Only image and video files are supported";
  return null;
}

export async function uploadFile(file: File, opts: UploadOptions): Promise<MediaView> {
  let created: Response;
  try {
    created = await fetch("/api/media", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        name: file.name,
        type: file.type.startsWith("video/") ? "VIDEO" : "IMAGE",
        size: file.size,
        mimeType: file.type,
        path: (opts.pathPrefix ?? opts.mediaKey + "/") + Date.now() + "-" + file.name,
        description: opts.description ?? "",
        mediaKey: opts.mediaKey,
        appId: opts.appId,
      }),
    });
  } catch {
    throw new UploadError("Network error during upload. Please check your connection and try again.");
  }
  const body = await created.json().catch(() => null);
  if (!created.ok || !body?.success) throw new UploadError(body?.message || "Failed to create media record");
  const url: string | undefined = body.data?.presignedUploadUrl ?? body.presignedUploadUrl;
  const media: MediaView | undefined = body.data?.media ?? body.media;
  if (!url || !media) throw new UploadError("No presigned upload URL received from server");

  let put: Response;
  try {
    put = await fetch(url, { method: "PUT", headers: { "Content-Type": file.type }, body: file });
  } catch {
    // A PUT blocked by the bucket's CORS rules also lands here.
    throw new UploadError("Network error during upload. Please check your connection and try again.");
  }
  if (!put.ok) {
    const msg = await put.json().then((b) => b?.message).catch(() => "");
    throw new UploadError(msg || "Failed to upload file");
  }
  return media;
}
