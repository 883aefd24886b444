import { useState } from "react";
import { ApiError, api, request } from "./lib/api";
import { appPath } from "./lib/links";

export interface ProfileActionsProps {
  appId: string;
  appName: string;
  authUrl: string;
  role: string;
  // Decided on the server (server/access): who may follow or unfollow.
  canFollow: boolean;
  canUnfollow: boolean;
}

// ProfileActions: follow or unfollow the app, and sign out. Only a FOLLOWER
// can unfollow; higher roles see their role instead of a button.
const ROLE_WORDS: Record<string, string> = {
  CREATOR: "Creator", ADMIN: "Admin", MODERATOR: "Moderator", SUBSCRIBER: "Subscriber", FOLLOWER: "Follower",
};

export default function ProfileActions(props: ProfileActionsProps) {
  const [role, setRole] = useState(props.role);
  const [can, setCan] = useState({ canFollow: props.canFollow, canUnfollow: props.canUnfollow });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const base = appPath(props.appName);
  const following = !can.canFollow && role !== "PUBLIC" && role !== "AUTHENTICATED";

  async function follow(action: "follow" | "unfollow") {
    setBusy(true);
    setError("");
    try {
      // A 401 (signed out elsewhere) goes back to the app: request's sessionLost.
      const params = { appId: props.appId };
      const data = action === "follow"
        ? await api("POST", "/api/notifications/follow/{appId}", { params })
        : await api("POST", "/api/notifications/unfollow/{appId}", { params });
      setRole(data.role);
      setCan({ canFollow: data.userPermissions.canFollow, canUnfollow: data.userPermissions.canUnfollow });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return;
      if (!(err instanceof ApiError) || err.status === 0) {
        setError(action === "follow" ? "Failed to follow app" : "Failed to unfollow app");
      } else {
        setError(action === "follow" ? "Failed to follow app: " + err.status + " " + err.message : err.message || "Failed to unfollow app");
      }
    } finally {
      setBusy(false);
    }
  }

  async function signOut() {
    setBusy(true);
    try {
      // Already signed out is as good as signed out: no session redirect.
      await request("POST", "/api/auth/logout", { keepSession: true });
    } catch (err) {
      // SPEC.md section 8: a logout failure is only logged; go on anyway.
      console.error("logout failed", err);
    }
    window.location.assign(props.authUrl + "/authenticate/signin?app=" + encodeURIComponent(props.appName));
  }

  return (
    <div className="profile-actions">
      <p className="meta" data-role={role}>
        {following ? "Role in this app: " + (ROLE_WORDS[role] ?? role.toLowerCase()) : "You don't follow this app yet."}
      </p>
      {/* Plain forms: without JavaScript they post and come back here. */}
      {can.canFollow && (
        <form method="post" action={base + "/follow"} onSubmit={(e) => { e.preventDefault(); follow("follow"); }}>
          <input type="hidden" name="back" value="profile" />
          <button type="submit" className="button" disabled={busy}>
            Follow
          </button>
        </form>
      )}
      {can.canUnfollow && (
        <form method="post" action={base + "/unfollow"} onSubmit={(e) => { e.preventDefault(); follow("unfollow"); }}>
          <button type="submit" className="button button-secondary" disabled={busy}>
            Unfollow
          </button>
        </form>
      )}
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      <form method="post" action={base + "/signout"} onSubmit={(e) => { e.preventDefault(); signOut(); }}>
        <button type="submit" className="button button-secondary" disabled={busy}>
          Sign Out
        </button>
      </form>
    </div>
  );
}
