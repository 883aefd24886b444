import { useEffect, useState } from "react";
import type { MediaView } from "../pages/lib/types";
import { EVENT_TYPES, typeLabel, type EventDetail } from "../pages/lib/events";
import { ApiError, api } from "./lib/api";
import { checkFile, uploadFile } from "./lib/upload";
import { MediaField, accessBody, useUpload } from "./CreatePostForm";
import { useHydrated } from "./lib/hydrated";
import { appPath } from "./lib/links";

export interface CreateEventFormProps {
  appId: string;
  appName: string;
  allowed: boolean; // canCreateEvents, decided on the server
  canFeature: boolean; // the featured checkbox is for creators and admins
  now: string; // the server's clock, so the first render matches
  // After a refused post without JavaScript: what was typed, and why.
  values?: Record<string, string>;
  error?: string;
  // The refused fields and why (the server's error `fields`), beside each input.
  fields?: Record<string, string>;
  // Who may read the details: PUBLIC, FOLLOWERS, MEMBERS or TIER:<id>.
  accessOptions?: { value: string; label: string }[];
}

function FieldError({ fields, name }: { fields?: Record<string, string>; name: string }) {
  const message = fields?.[name];
  if (!message) return null;
  return (
    <span className="field-error" id={"error-" + name}>
      {message}
    </span>
  );
}

const PREFIX = "media/events/";

function ymd(d: Date, utc: boolean): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return utc
    ? d.getUTCFullYear() + "-" + p(d.getUTCMonth() + 1) + "-" + p(d.getUTCDate())
    : d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate());
}

// defaults of SPEC.md section 9: today 18:00 to tomorrow 20:00.
function defaults(now: Date, utc: boolean) {
  const tomorrow = new Date(now.getTime() + 24 * 3600 * 1000);
  return { startDate: ymd(now, utc), startTime: "18:00", endDate: ymd(tomorrow, utc), endTime: "20:00" };
}

type Extra = { name: string; state: "uploading" | "uploaded"; media?: MediaView };

// CreateEventForm applies SPEC.md section 5's rules and messages in the
// browser; the server applies them again.
export default function CreateEventForm(props: CreateEventFormProps) {
  const hydrated = useHydrated();
  const banner = useUpload(props.appId, "event-banner", PREFIX);
  const [f, setF] = useState({
    name: "",
    description: "",
    type: "MEETUP",
    location: "",
    access: "PUBLIC",
    isFeatured: false,
    ...defaults(new Date(props.now), true),
    ...props.values,
  });
  const [extras, setExtras] = useState<Extra[]>([]);
  const [creating, setCreating] = useState(false);
  const [error, setError] = useState(props.error ?? "");
  // A new submit replaces the refused post's field messages.
  const [fieldErrs, setFieldErrs] = useState(props.fields ?? {});
  // The server rendered UTC dates; after hydration "today" is the visitor's
  // (unless the form comes back with what was typed).
  useEffect(() => {
    if (!props.values?.startDate) setF((x) => ({ ...x, ...defaults(new Date(), false) }));
  }, []);

  const uploading = banner.upload.state === "uploading" || extras.some((x) => x.state === "uploading");
  const disabled = !props.appId || !f.name.trim() || !f.startDate || !f.endDate || uploading || creating;

  async function addExtras(files: FileList | null) {
    for (const file of Array.from(files ?? [])) {
      const bad = checkFile(file, "event-media");
      if (bad) {
        setError(bad);
        continue;
      }
      const entry: Extra = { name: file.name, state: "uploading" };
      setExtras((xs) => [...xs, entry]);
      try {
        const media = await uploadFile(file, { appId: props.appId, mediaKey: "event-media", pathPrefix: PREFIX });
        setExtras((xs) => xs.map((x) => (x === entry ? { ...x, state: "uploaded", media } : x)));
      } catch (err) {
        setExtras((xs) => xs.filter((x) => x !== entry));
        setError(err instanceof Error && err.message ? err.message : "Upload failed");
      }
    }
  }

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setError("");
    setFieldErrs({});
    if (!props.appId) return setError("App not loaded. Please try again.");
    if (!f.name.trim()) return setError("Please enter an event name");
    if (!f.startDate || !f.endDate || !f.startTime || !f.endTime) return setError("Please select start and end dates");
    const start = new Date(f.startDate + "T" + f.startTime);
    const end = new Date(f.endDate + "T" + f.endTime);
    if (isNaN(start.getTime()) || isNaN(end.getTime())) return setError("Please select start and end dates");
    if (end <= start) return setError("End date/time must be after start date/time");
    if (start.getTime() < Date.now()) return setError("Start date/time cannot be in the past");
    if (uploading || creating) return;
    setCreating(true);
    const mediaIds = [
      ...(banner.upload.state === "uploaded" ? [banner.upload.media.id] : []),
      ...extras.filter((x) => x.media).map((x) => x.media!.id),
    ];
    try {
      const data = await api("POST", "/api/events/apps/{appId}/events", {
        params: { appId: props.appId },
        body: {
          name: f.name.trim(),
          description: f.description,
          location: f.location,
          startDate: start.toISOString(),
          endDate: end.toISOString(),
          type: f.type as EventDetail["type"],
          settings: {},
          mediaIds,
          appId: props.appId,
          isFeatured: props.canFeature && f.isFeatured,
          access: accessBody(f.access, "").access,
        },
        fallback: "Failed to create event",
      });
      window.location.href = appPath(props.appName) + "/events/" + data.id;
    } catch (err) {
      setError(err instanceof Error && err.message ? err.message : "Failed to create event");
      // The server's refused fields go beside their inputs, as without JS.
      if (err instanceof ApiError) setFieldErrs(err.fields);
      setCreating(false);
    }
  }

  if (!props.allowed) return <p className="state state-error">You do not have permission to create events</p>;
  return (
    // Without JavaScript the form posts to the page itself (no uploads;
    // times read as UTC); with it, submit calls the JSON API.
    <form className="create-form" method="post" action={appPath(props.appName) + "/create-event"} onSubmit={submit} data-hydrated={hydrated ? "true" : undefined}>
      <noscript>
        <p className="hint">Without JavaScript, times are in UTC and media cannot be added.</p>
      </noscript>
      <label>
        Event name
        <input name="name" value={f.name} onChange={(e) => setF({ ...f, name: e.target.value })} maxLength={200} />
        <FieldError fields={fieldErrs} name="name" />
      </label>
      <label>
        Description
        <textarea name="description" rows={4} value={f.description} onChange={(e) => setF({ ...f, description: e.target.value })} maxLength={5000} />
        <FieldError fields={fieldErrs} name="description" />
      </label>
      <label>
        Type
        <select name="type" value={f.type} onChange={(e) => setF({ ...f, type: e.target.value })}>
          {EVENT_TYPES.map((t) => (
            <option key={t} value={t}>
              {typeLabel(t)}
            </option>
          ))}
        </select>
        <FieldError fields={fieldErrs} name="type" />
      </label>
      <label>
        Location
        <input name="location" value={f.location} onChange={(e) => setF({ ...f, location: e.target.value })} maxLength={500} />
        <FieldError fields={fieldErrs} name="location" />
      </label>
      <div className="date-row">
        <label>
          Start date
          <input type="date" name="startDate" value={f.startDate} onChange={(e) => setF({ ...f, startDate: e.target.value })} />
          <FieldError fields={fieldErrs} name="startDate" />
        </label>
        <label>
          Start time
          <input type="time" name="startTime" value={f.startTime} onChange={(e) => setF({ ...f, startTime: e.target.value })} />
        </label>
      </div>
      <div className="date-row">
        <label>
          End date
          <input type="date" name="endDate" value={f.endDate} onChange={(e) => setF({ ...f, endDate: e.target.value })} />
          <FieldError fields={fieldErrs} name="endDate" />
        </label>
        <label>
          End time
          <input type="time" name="endTime" value={f.endTime} onChange={(e) => setF({ ...f, endTime: e.target.value })} />
        </label>
      </div>
      {props.accessOptions && props.accessOptions.length > 1 && (
        <label>
          Who can see the details
          <select name="access" value={f.access} onChange={(e) => setF({ ...f, access: e.target.value })} data-testid="event-access">
            {props.accessOptions.map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </select>
          <FieldError fields={fieldErrs} name="access" />
        </label>
      )}
      {props.canFeature && (
        <label className="check">
          <input type="checkbox" name="isFeatured" value="true" checked={f.isFeatured} onChange={(e) => setF({ ...f, isFeatured: e.target.checked })} /> Featured event
        </label>
      )}
      <MediaField upload={banner.upload} onPick={banner.pick} onClear={banner.clear} label="Add banner" />
      <label className="media-pick">
        <span>Additional media</span>
        <input type="file" multiple accept="image/jpeg,image/png,video/mp4,video/webm" onChange={(e) => addExtras(e.target.files)} />
      </label>
      {extras.length > 0 && (
        <ul className="extra-media">
          {extras.map((x, i) => (
            <li key={i}>
              {x.name} · {x.state === "uploading" ? "Uploading..." : "Uploaded"}
            </li>
          ))}
        </ul>
      )}
      {(error || banner.error) && (
        <p className="inline-error" role="alert">
          {error || banner.error}
        </p>
      )}
      {/* Before hydration the button stays enabled: it is the no-JavaScript submit. */}
      <button className="button" type="submit" disabled={hydrated && disabled}>
        {creating ? "Creating Event..." : "Create Event"}
      </button>
    </form>
  );
}
