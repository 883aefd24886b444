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
//
// The path a call names is a path of api/openapi.yaml, with its {params}
// as they are written there: the call's parameters, body and answer take
// their types from pages/lib/openapi.ts, which openapi-typescript generates
// from that file (go run ./scripts/build). So a call to a path the API does
// not have, with a parameter it does not take, or reading a field its answer
// does not hold, fails `tsc` instead of a page.
import { sessionLost } from "../../pages/lib/session";
import type { paths } from "../../pages/lib/openapi";
import type { StorePagination } from "../../pages/lib/types";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

// Operation is what api/openapi.yaml says of method M on path P.
type Operation<M extends Method, P extends keyof paths> = NonNullable<paths[P][Lowercase<M>]>;

// PathOf lists the paths that answer method M.
export type PathOf<M extends Method> = {
  [P in keyof paths]: paths[P][Lowercase<M>] extends { responses: unknown } ? P : never;
}[keyof paths];

// Success is the body of the operation's 200 or 201 answer.
type Success<O> = O extends { responses: infer R }
  ? R[keyof R & (200 | 201)] extends infer A
    ? A extends { content: { "application/json": infer B } }
      ? B
      : never
    : never
  : never;

// Data is the envelope's data in the answer to method M on path P.
export type Data<M extends Method, P extends PathOf<M>> =
  Success<Operation<M, P>> extends { data?: infer D } ? D : undefined;

// Body is the JSON body method M on path P takes.
export type Body<M extends Method, P extends PathOf<M>> = JSONBody<Operation<M, P>>;

// Query is the query method M on path P takes.
export type Query<M extends Method, P extends PathOf<M>> = QueryParams<Operation<M, P>>;

type PathParams<O> = O extends { parameters: { path: infer X } } ? X : never;
type QueryParams<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type JSONBody<O> = O extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;
type BodyRequired<O> = O extends { requestBody: { content: unknown } } ? true : false;

// CallOptions are a call's parameters, typed by its operation, and how to
// treat its answer.
export type CallOptions<O> = RequestOptions &
  ([PathParams<O>] extends [never] ? { params?: never } : { params: PathParams<O> }) &
  ([QueryParams<O>] extends [never] ? { query?: never } : { query?: QueryParams<O> }) &
  ([JSONBody<O>] extends [never] ? { body?: never } : BodyRequired<O> extends true ? { body: JSONBody<O> } : { body?: JSONBody<O> });

// Args makes the options optional for a call that needs none.
type Args<O> = [PathParams<O>] extends [never]
  ? BodyRequired<O> extends true
    ? [opts: CallOptions<O>]
    : [opts?: CallOptions<O>]
  : [opts: CallOptions<O>];

export interface RequestOptions {
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

// apiURL fills the {params} of path and appends the query (undefined values
// left out). It builds the query itself: the server renderer's JavaScript
// has no URLSearchParams, and the client tests run there.
export function apiURL(path: string, params?: object, query?: object): string {
  const values = (params ?? {}) as Record<string, unknown>;
  let out = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (values[name] === undefined) throw new Error("missing parameter " + name + " of " + path);
    return encodeURIComponent(String(values[name]));
  });
  const q: string[] = [];
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined || v === null) continue;
    for (const one of Array.isArray(v) ? v : [v]) q.push(encodeURIComponent(k) + "=" + encodeURIComponent(String(one)));
  }
  if (q.length > 0) out += "?" + q.join("&");
  return out;
}

// request calls method on path, an operation of api/openapi.yaml, and
// resolves with its answer's envelope.
export async function request<M extends Method, P extends PathOf<M>>(
  method: M,
  path: P,
  ...[opts]: Args<Operation<M, P>>
): Promise<Answer<Data<M, P>>> {
  const o = (opts ?? {}) as RequestOptions & { params?: object; query?: object; body?: unknown };
  return send<Data<M, P>>(method, apiURL(path, o.params, o.query), o);
}

// api is request for callers that only want the data.
export async function api<M extends Method, P extends PathOf<M>>(
  method: M,
  path: P,
  ...args: Args<Operation<M, P>>
): Promise<Data<M, P>> {
  return (await request(method, path, ...args)).data;
}

// send is the one place that calls fetch for the JSON API.
async function send<T>(method: Method, target: string, opts: RequestOptions & { body?: unknown }): Promise<Answer<T>> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(target, {
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
export async function putBytes<P extends PathOf<"PUT">>(
  path: P,
  params: PathParams<Operation<"PUT", P>>,
  body: Blob,
  fallback: string,
): Promise<Data<"PUT", P>> {
  let res: Response;
  try {
    res = await fetch(apiURL(path, params as object), {
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
  return json.data as Data<"PUT", P>;
}
