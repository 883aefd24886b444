// The upload flow of SPEC.md section 4: create the media record, PUT the
// file to the presigned URL with its content type, then the media is ready
// to attach. The same code works for S3 and for local disk.
import type { MediaView } from "../../pages/lib/types";
import { ApiError, putFile, request, type Answer, type Data } from "./api";

export interface UploadOptions {
  appId?: string;
  mediaKey: string; // profile, story, post, event-banner
  description?: string;
  // pathPrefix labels the object (SPEC.md: media/events/ for events); the
  // server chooses the real key.
  pathPrefix?: string;
}

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

// uploadFile's errors are ApiErrors (status 0 when the network failed), so
// a form can tell a refusal from a lost connection.
export async function uploadFile(file: File, opts: UploadOptions): Promise<MediaView> {
  const NETWORK = "Network error during upload. Please check your connection and try again.";
  let created: Answer<Data<"POST", "/api/media">>;
  try {
    created = await request("POST", "/api/media", {
      body: {
        name: file.name,
        type: file.type.startsWith("video/") ? "VIDEO" : "IMAGE",
        size: file.size,
        mimeType: file.type,
        path: (opts.pathPrefix ?? opts.mediaKey + "/") + Date.now() + "-" + file.name,
        description: opts.description ?? "",
        mediaKey: opts.mediaKey,
        appId: opts.appId,
      },
      fallback: "Failed to create media record",
    });
  } catch (err) {
    if (err instanceof ApiError && err.status === 0) throw new ApiError(NETWORK, 0);
    throw err;
  }
  const url = created.data?.presignedUploadUrl;
  const media = created.data?.media;
  // The server answered, but not what it must: a server fault, not the network.
  if (!url || !media) throw new ApiError("No presigned upload URL received from server", 500);
  try {
    await putFile(url, file, "Failed to upload file");
  } catch (err) {
    if (err instanceof ApiError && err.status === 0) throw new ApiError(NETWORK, 0);
    throw err;
  }
  return media;
}
