import { useEffect, useState } from "react";
import { api } from "./lib/api";
import { checkFile, uploadFile } from "./lib/upload";

export interface ProfilePictureUploadProps {
  pictureUrl: string;
  username: string;
}

// ProfilePictureUpload uploads an image (under 5MB), makes it the profile
// picture, shows a toast for 4 seconds and reloads after 1 second.
export default function ProfilePictureUpload({ pictureUrl, username }: ProfilePictureUploadProps) {
  const [busy, setBusy] = useState(false);
  const [toast, setToast] = useState<{ ok: boolean; text: string } | null>(null);

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
      await api("POST", "/api/auth/profile-picture", { mediaId: media.id });
      setToast({ ok: true, text: "Profile picture uploaded successfully!" });
      setTimeout(() => window.location.reload(), 1000);
    } catch {
      setToast({ ok: false, text: "Failed to upload profile picture. Please try again." });
    }
    setBusy(false);
  }

  return (
    <div className="profile-picture">
      {pictureUrl ? (
        <img src={pictureUrl} alt={username} width={96} height={96} decoding="async" className="profile-picture-img" />
      ) : (
        <span className="profile-picture-img story-initial" aria-hidden="true">
          {username.slice(0, 1).toUpperCase()}
        </span>
      )}
      <label className="button button-secondary">
        {busy ? "Uploading..." : "Change picture"}
        <input type="file" accept="image/*" className="visually-hidden" disabled={busy} onChange={(e) => pick(e.target.files?.[0])} />
      </label>
      {toast && (
        <div className={"toast " + (toast.ok ? "toast-ok" : "toast-error")} role="status">
          {toast.text}
        </div>
      )}
    </div>
  );
}
