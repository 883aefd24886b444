import { useEffect, useState } from "react";
import { ApiError, api } from "./lib/api";
import { useHydrated } from "./lib/hydrated";
import { ownRegistration, waitForWorker } from "./lib/worker";

export interface PushToggleProps {
  appId: string;
  // Where the app's service worker is (islands/lib/worker.ts): a
  // subscription belongs to the worker of the origin it is made on.
  appName: string;
  onDomain?: boolean;
  // Following comes first (SPEC.md section 4); the server decides.
  member: boolean;
}

type Status = "checking" | "on" | "off";

function supported(): boolean {
  return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
}

function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const pad = "=".repeat((4 - (base64url.length % 4)) % 4);
  const raw = atob((base64url + pad).replace(/-/g, "+").replace(/_/g, "/"));
  const out = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

function toBase64url(buf: ArrayBuffer | null): string {
  if (!buf) return "";
  let s = "";
  new Uint8Array(buf).forEach((b) => (s += String.fromCharCode(b)));
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// PushToggle enables web push for this app on this device, with every rule
// and message of SPEC.md section 5. isSubscribed is true only when a push
// subscription exists and the unread call succeeds; checked 1 s after load.
export default function PushToggle(props: PushToggleProps) {
  const [status, setStatus] = useState<Status>("checking");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();
  const app = { name: props.appName, onDomain: props.onDomain };

  useEffect(() => {
    const t = window.setTimeout(async () => {
      if (!supported() || !props.member) {
        setStatus("off");
        return;
      }
      try {
        const reg = await waitForWorker(app, 30);
        const sub = reg ? await reg.pushManager.getSubscription() : null;
        if (!sub) {
          setStatus("off");
          return;
        }
        // The subscription is on when the server still takes this member's
        // calls; a refusal means off, a lost network is an error.
        const on = await api("GET", "/api/notifications/unread/{appId}", { params: { appId: props.appId }, query: { page: 1, limit: 1 } }).then(
          () => true,
          (err) => {
            if (err instanceof ApiError && err.status !== 0) return false;
            throw err;
          },
        );
        setStatus(on ? "on" : "off");
      } catch {
        setError("Failed to check notification status");
        setStatus("off");
      }
    }, 1000);
    return () => window.clearTimeout(t);
  }, [props.appId, props.appName, props.onDomain, props.member]);

  async function enable() {
    setError("");
    if (!props.appId) return setError("User or app not available");
    if (!props.member) return setError("You must follow the app before enabling push notifications");
    if (!supported()) return setError("Push notifications not supported");
    setBusy(true);
    try {
      const permission = await Notification.requestPermission();
      if (permission !== "granted") return setError("Notification permission denied");
      const reg = await waitForWorker(app, 50);
      if (!reg) return setError("Push notifications not supported");
      const key = await api("GET", "/api/notifications/vapid-key").catch(() => null);
      if (!key?.publicKey) return setError("Failed to get VAPID key");
      const sub =
        (await reg.pushManager.getSubscription()) ??
        (await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key.publicKey) }));
      const p256dh = toBase64url(sub.getKey("p256dh"));
      const auth = toBase64url(sub.getKey("auth"));
      if (!p256dh || !auth) return setError("Failed to setup push subscription - missing keys");
      try {
        await api("POST", "/api/notifications/enable-push/{appId}", { params: { appId: props.appId }, body: { endpoint: sub.endpoint, p256dh, auth } });
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        return setError("Failed to save push subscription: " + err.status + " " + err.message);
      }
      setStatus("on");
    } catch (err) {
      console.error("marquee: enable push", err);
      setError("Push notifications not supported");
    } finally {
      setBusy(false);
    }
  }

  async function disable() {
    setBusy(true);
    try {
      const reg = await ownRegistration(app);
      const sub = await reg?.pushManager.getSubscription();
      await sub?.unsubscribe();
      setStatus("off");
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="push-toggle" data-hydrated={hydrated ? "true" : undefined}>
      {status === "on" ? (
        <>
          <p className="meta" data-push-status="on">
            Push notifications are on for this device.
          </p>
          <button type="button" className="button button-secondary" disabled={busy} onClick={disable}>
            Turn off on this device
          </button>
        </>
      ) : (
        <>
          <p className="meta" data-push-status={status}>
            {status === "checking" ? "Checking…" : "Get notified on this device, even when the app is closed."}
          </p>
          <button type="button" className="button" disabled={busy || status === "checking"} onClick={enable}>
            Enable push notifications
          </button>
        </>
      )}
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
