import { useEffect, useState } from "react";
import { api } from "./lib/api";
import { checkFile, uploadFile } from "./lib/upload";
import { useHydrated } from "./lib/hydrated";
import { appPath } from "./lib/links";

export interface ProfilePictureUploadProps {
  pictureUrl: string;
  username: string;
  appName: string;
  // The answer of the picture form without JavaScript (the server's words).
  notice?: string;
  noticeOk?: boolean;
}

// ProfilePictureUpload uploads an image (under 5MB), makes it the profile
// picture, shows a toast for 4 seconds and reloads after 1 second. The
// markup is a multipart form posting to /apps/{app}/profile/picture, so
// without JavaScript a chosen file is sent with the Upload button.
export default function ProfilePictureUpload({ pictureUrl, username, appName, notice, noticeOk }: ProfilePictureUploadProps) {
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();
  const [toast, setToast] = useState<{ ok: boolean; text: string } | null>(notice ? { ok: !!noticeOk, text: notice } : null);

  useEffect(() => {
    if (!toast) return;
    const t = setTimeout(() => setToast(null), 4000);
    return () => clearTimeout(t);
  }, [toast]);

  async function pick(file: File | undefined) {
    if (!file) return;
    const bad = checkFile(file, "profile");
    if (bad) {
      setToast({ ok: false, text: bad });
      return;
    }
    setBusy(true);
    try {
      const media = await uploadFile(file, { mediaKey: "profile" });
      await api("POST", "/api/auth/profile-picture", { body: { mediaId: media.id } });
      setToast({ ok: true, text: "Profile picture uploaded successfully!" });
      setTimeout(() => window.location.assign(window.location.pathname), 1000);
    } catch {
      setToast({ ok: false, text: "Failed to upload profile picture. Please try again." });
    }
    setBusy(false);
  }

  return (
    <form className="profile-picture" method="post" action={appPath(appName) + "/profile/picture"} encType="multipart/form-data"
      onSubmit={(e) => e.preventDefault()} data-hydrated={hydrated || undefined}>
      {pictureUrl ? (
        <img src={pictureUrl} alt={username} width={96} height={96} decoding="async" className="profile-picture-img" />
      ) : (
        <span className="profile-picture-img story-initial" aria-hidden="true">
          {username.slice(0, 1).toUpperCase()}
        </span>
      )}
      <label className="button button-secondary">
        {busy ? "Uploading..." : "Change picture"}
        <input type="file" name="picture" accept="image/*" className="visually-hidden" disabled={busy}
          onChange={(e) => hydrated && pick(e.target.files?.[0])} />
      </label>
      {!hydrated && (
        <button type="submit" className="button picture-submit">
          Upload
        </button>
      )}
      {toast && (
        <div className={"toast " + (toast.ok ? "toast-ok" : "toast-error")} role="status">
          {toast.text}
        </div>
      )}
    </form>
  );
}
