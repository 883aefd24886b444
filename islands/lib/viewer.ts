import { useEffect, useState } from "react";
import { request } from "./api";

// Pages that members of a role share (server/pagecache.go) are rendered with
// a signed-in viewer whose id is "": nobody in particular. What is personal
// (id, name, picture) comes from GET /api/auth/me, asked once per page load
// however many islands want it, and never enters the shared HTML.
export interface ViewerInfo {
  id: string;
  username: string;
  pictureUrl: string;
}

let pending: Promise<ViewerInfo | null> | null = null;

export function loadViewer(): Promise<ViewerInfo | null> {
  if (!pending) {
    // A 401 only means nobody is signed in: the page shows a visitor's view.
    pending = request("GET", "/api/auth/me", { keepSession: true })
      .then(({ data }) => ({
        id: data.user.id,
        username: data.user.username,
        pictureUrl: data.user.profilePicture?.signedUrl ?? "",
      }))
      .catch(() => null);
  }
  return pending;
}

// useViewerId returns the viewer's id: as rendered when the page knew it
// (or null for a visitor), else once /api/auth/me answers ("" until then).
export function useViewerId(rendered: string | null): string | null {
  const [id, setId] = useState(rendered);
  useEffect(() => {
    if (rendered !== "") return;
    let live = true;
    loadViewer().then((v) => live && setId(v ? v.id : null));
    return () => {
      live = false;
    };
  }, [rendered]);
  return id;
}

// useViewerPicture is the same for the profile picture.
export function useViewerPicture(rendered: string, unknown: boolean): string {
  const [url, setUrl] = useState(rendered);
  useEffect(() => {
    if (!unknown) return;
    let live = true;
    loadViewer().then((v) => live && v && setUrl(v.pictureUrl));
    return () => {
      live = false;
    };
  }, [unknown]);
  return url;
}
