import { useState } from "react";

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
export default function ProfileActions(props: ProfileActionsProps) {
  const [role, setRole] = useState(props.role);
  const [can, setCan] = useState({ canFollow: props.canFollow, canUnfollow: props.canUnfollow });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const following = !can.canFollow && role !== "PUBLIC" && role !== "AUTHENTICATED";
  const home = "/apps/" + props.appName;

  async function follow(action: "follow" | "unfollow") {
    setBusy(true);
    setError("");
    try {
      const res = await fetch("/api/notifications/" + action + "/" + encodeURIComponent(props.appId), {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: "{}",
      });
      if (res.status === 401) {
        // Signed out elsewhere: the member context is gone, back to the app.
        window.location.assign(home);
        return;
      }
      const body = await res.json().catch(() => ({}));
      if (!res.ok || !body.success) {
        setError(
          action === "follow"
            ? "Failed to follow app: " + res.status + " " + (body.message ?? "")
            : body.message || "Failed to unfollow app",
        );
        return;
      }
      setRole(body.data.role);
      setCan({ canFollow: body.data.userPermissions.canFollow, canUnfollow: body.data.userPermissions.canUnfollow });
    } catch {
      setError(action === "follow" ? "Failed to follow app" : "Failed to unfollow app");
    } finally {
      setBusy(false);
    }
  }

  async function signOut() {
    setBusy(true);
    try {
      const res = await fetch("/api/auth/logout", { method: "POST", credentials: "same-origin" });
      await res.text();
    } catch (err) {
      // SPEC.md section 8: a logout failure is only logged; go on anyway.
      console.error("logout failed", err);
    }
    window.location.assign(props.authUrl + "/authenticate/signin?app=" + encodeURIComponent(props.appName));
  }

  return (
    <div className="profile-actions">
      <p className="meta" data-role={role}>
        {following ? "Role in this app: " + role.toLowerCase() : "You don't follow this app yet."}
      </p>
      {can.canFollow && (
        <button type="button" className="button" disabled={busy} onClick={() => follow("follow")}>
          Follow
        </button>
      )}
      {can.canUnfollow && (
        <button type="button" className="button button-secondary" disabled={busy} onClick={() => follow("unfollow")}>
          Unfollow
        </button>
      )}
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      <button type="button" className="button button-secondary" disabled={busy} onClick={signOut}>
        Sign Out
      </button>
    </div>
  );
}
