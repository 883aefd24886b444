// Every request the browser makes goes through this file (README "The JSON
// API"). request sends JSON to the same origin with the session cookie and
// unwraps the envelope {success, data, pagination, message, fields}: it
// resolves with the data, or rejects with an ApiError that carries the
// status, the server's message and its field errors.
//
// Cross-site protection (server/csrf.go) needs no token: the server refuses
// a write whose Sec-Fetch-Site (or, without it, Origin) names another site,
// and the browser sets both itself on a same-origin fetch. So calls use
// relative paths and credentials "same-origin", nothing more.
import { sessionLost } from "../../pages/lib/session";
import type { StorePagination } from "../../pages/lib/types";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface RequestOptions {
  // body is sent as JSON; GET and DELETE usually have none.
  body?: unknown;
  // fallback is the message when the server gives none (SPEC.md section 8).
  fallback?: string;
  // keepSession: a 401 is an answer to show, not a lost session (a call a
  // visitor may make, such as asking who is signed in).
  keepSession?: boolean;
  signal?: AbortSignal;
}

// Answer is a success envelope: the data and what travels beside it.
export interface Answer<T> {
  data: T;
  pagination?: StorePagination;
  message?: string;
}

export class ApiError extends Error {
  constructor(
    message: string,
    // status is the HTTP status, 0 when the server was never reached.
    public status: number,
    // fields maps refused form fields to their messages.
    public fields: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }

  // offline: the request may succeed later unchanged (no network, or the
  // server failed); anything else is a refusal to show.
  get offline(): boolean {
    return this.status === 0 || this.status >= 500;
  }
}

const NETWORK_ERROR = "Network error";

// request is the one place that calls fetch for the JSON API.
export async function request<T>(method: Method, path: string, opts: RequestOptions = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: "same-origin",
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
    });
  } catch (err) {
    // An abort is the caller's own doing, not a lost network.
    if ((err as Error)?.name === "AbortError") throw err;
    throw new ApiError(NETWORK_ERROR, 0);
  }
  // The session ended while the page was open (SPEC.md section 8).
  if (res.status === 401 && !opts.keepSession) sessionLost();
  const json = await res.json().catch(() => null);
  if (!res.ok || !json || json.success !== true) {
    const message = (json && typeof json.message === "string" && json.message) || opts.fallback || "Request failed";
    const fields = json && typeof json.fields === "object" && json.fields ? (json.fields as Record<string, string>) : {};
    throw new ApiError(message, res.status, fields);
  }
  return { data: json.data as T, pagination: json.pagination, message: json.message };
}

// api is request for callers that only want the data.
export async function api<T>(method: Method, path: string, body?: unknown, fallback?: string): Promise<T> {
  return (await request<T>(method, path, { body, fallback })).data;
}

// offline says whether err is worth retrying later (see ApiError.offline);
// an error that is not an ApiError is a bug or a lost network: offline.
export function offline(err: unknown): boolean {
  return !(err instanceof ApiError) || err.offline;
}

// putFile sends a file's bytes to a presigned upload URL (SPEC.md section 4).
// It is not a JSON call: the URL may be another host (S3), so no cookie is
// sent, and the answer is only read for a message.
export async function putFile(url: string, file: File, fallback: string): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, { method: "PUT", headers: { "Content-Type": file.type }, body: file });
  } catch {
    // A PUT blocked by the bucket's CORS rules also lands here.
    throw new ApiError(NETWORK_ERROR, 0);
  }
  if (!res.ok) {
    const message = await res
      .json()
      .then((b) => (b && typeof b.message === "string" ? b.message : ""))
      .catch(() => "");
    throw new ApiError(message || fallback, res.status);
  }
}

// putBytes sends raw bytes (one part of a resumable upload, server/
// item_uploads.go) to the server itself, with the session cookie, and reads
// the JSON envelope like request.
export async function putBytes<T>(path: string, body: Blob, fallback: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: "PUT",
      credentials: "same-origin",
      headers: { Accept: "application/json", "Content-Type": "application/octet-stream" },
      body,
    });
  } catch {
    throw new ApiError(NETWORK_ERROR, 0);
  }
  if (res.status === 401) sessionLost();
  const json = await res.json().catch(() => null);
  if (!res.ok || !json || json.success !== true) {
    const message = (json && typeof json.message === "string" && json.message) || fallback;
    throw new ApiError(message, res.status);
  }
  return json.data as T;
}
