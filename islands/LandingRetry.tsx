import { useState } from "react";
import { ApiError, request } from "./lib/api";
import { useHydrated } from "./lib/hydrated";

export interface LandingRetryProps {
  appName: string;
  message: string;
  retryHref: string;
}

// LandingRetry is the landing page's error state ('Failed to load landing
// page'). Retry is a link that reloads the page; with JavaScript it first
// asks the landing call (SPEC.md section 8): a non-OK answer says 'Failed to
// fetch landing data: {status}', no answer at all the fallback, and only a
// landing that loads reloads the page.
export default function LandingRetry({ appName, message: first, retryHref }: LandingRetryProps) {
  const hydrated = useHydrated();
  const [message, setMessage] = useState(first);
  const [busy, setBusy] = useState(false);

  async function retry(e: React.MouseEvent) {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    try {
      await request("GET", "/api/app/{appId}/landing", { params: { appId: appName }, keepSession: true });
      window.location.assign(retryHref);
      return;
    } catch (err) {
      const status = err instanceof ApiError ? err.status : 0;
      setMessage(status > 0 ? "Failed to fetch landing data: " + status : "Failed to load landing page");
    }
    setBusy(false);
  }

  return (
    <div className="state state-error" role="alert" data-hydrated={hydrated || undefined}>
      <p>{message}</p>
      <a className="button" href={retryHref} onClick={retry} aria-disabled={busy || undefined}>
        Retry
      </a>
    </div>
  );
}
