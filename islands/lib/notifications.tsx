import { useCallback, useEffect, useState } from "react";
import { api } from "./api";
import { Icon } from "./icons";
import {
  fromLine,
  noticeTime,
  type NotificationPagination,
  type NotificationView,
  type SearchResults,
} from "../../pages/lib/notifications";
import { appPath } from "./links";

const localDate = (iso: string) => new Date(iso).toLocaleDateString();

// unread asks GET /api/notifications/unread/:appId for a page.
function unread(appId: string, page: number, limit = 20) {
  return api("GET", "/api/notifications/unread/{appId}", { params: { appId }, query: { page, limit } });
}

// useUnreadCount polls the unread total (limit=1: the health check of
// SPEC.md section 7). The count is personal, so it is never in the page HTML.
export function useUnreadCount(appId: string, enabled: boolean): [number, (n: number) => void] {
  const [count, setCount] = useState(0);
  useEffect(() => {
    if (!enabled) return;
    let stop = false;
    const load = () =>
      unread(appId, 1, 1)
        .then((u) => !stop && setCount(u.pagination.total))
        .catch(() => {});
    load();
    const timer = window.setInterval(() => document.visibilityState === "visible" && load(), 60000);
    const onVisible = () => document.visibilityState === "visible" && load();
    document.addEventListener("visibilitychange", onVisible);
    window.addEventListener("marquee:notifications", load);
    return () => {
      stop = true;
      window.clearInterval(timer);
      document.removeEventListener("visibilitychange", onVisible);
      window.removeEventListener("marquee:notifications", load);
    };
  }, [appId, enabled]);
  return [count, setCount];
}

// NotificationsPanel: the slide-in list with paging, Mark All as Read and
// Retry (SPEC.md section 2).
export function NotificationsPanel({ appId, onClose, onCount }: { appId: string; onClose: () => void; onCount: (n: number) => void }) {
  const [page, setPage] = useState(1);
  const [items, setItems] = useState<NotificationView[] | null>(null);
  const [pagination, setPagination] = useState<NotificationPagination | null>(null);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);

  const load = useCallback(
    async (p: number) => {
      setError("");
      try {
        const u = await unread(appId, p);
        setItems(u.notifications);
        setPagination(u.pagination);
        setPage(p);
        onCount(u.pagination.total);
      } catch {
        setError("Failed to fetch notifications");
      }
    },
    [appId, onCount],
  );
  useEffect(() => {
    load(1);
  }, [load]);

  async function markAll() {
    setBusy(true);
    try {
      await api("POST", "/api/notifications/read/{appId}", { params: { appId }, body: { markAll: true } });
      await load(1);
    } catch {
      setError("Failed to mark notifications as read");
    } finally {
      setBusy(false);
    }
  }

  const now = new Date().toISOString();
  return (
    <aside className="side-panel notifications-panel" role="dialog" aria-label="Notifications">
      <div className="panel-head">
        <h2>Notifications</h2>
        <button type="button" className="icon-button" aria-label="Close notifications" onClick={onClose}>
          <Icon name="CLOSE" />
        </button>
      </div>
      {items && items.length > 0 && (
        <button type="button" className="button button-secondary mark-all" disabled={busy} onClick={markAll}>
          Mark All as Read
        </button>
      )}
      {error && (
        <div className="error-state" role="alert">
          <p>{error}</p>
          <button type="button" className="button" onClick={() => load(page)}>
            Retry
          </button>
        </div>
      )}
      {!items && !error && <p className="meta">Loading...</p>}
      {items && items.length === 0 && !error && <p className="empty">No notifications yet</p>}
      {items && items.length > 0 && (
        <ul className="notification-list">
          {items.map((n) => (
            <li key={n.id}>
              <a href={n.link || "#"}>
                <span className="notification-text">{n.content}</span>
                <span className="meta">
                  {fromLine(n)} · {noticeTime(n.createdAt, now, localDate)}
                </span>
              </a>
            </li>
          ))}
        </ul>
      )}
      {pagination && pagination.totalPages > 1 && (
        <nav className="pager" aria-label="Notification pages">
          <button type="button" className="button button-secondary" disabled={!pagination.hasPrev} onClick={() => load(page - 1)}>
            Previous
          </button>
          <span>
            {pagination.page} of {pagination.totalPages}
          </span>
          <button type="button" className="button button-secondary" disabled={!pagination.hasNext} onClick={() => load(page + 1)}>
            Next
          </button>
        </nav>
      )}
    </aside>
  );
}

// SearchOverlay: the header's search box. Typing shows grouped results from
// the search call; Enter (or no JavaScript) opens the search page.
export function SearchOverlay({ appId, appName, onClose }: { appId: string; appName: string; onClose: () => void }) {
  const [q, setQ] = useState("");
  const [res, setRes] = useState<SearchResults | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    if (q.trim() === "") {
      setRes(null);
      return;
    }
    const t = window.setTimeout(() => {
      api("GET", "/api/search/apps/{appId}", { params: { appId }, query: { q } })
        .then((found) => {
          setError("");
          setRes(found);
        })
        .catch(() => setError("Search failed"));
    }, 250);
    return () => window.clearTimeout(t);
  }, [q, appId]);
  const empty = res && res.posts.length + res.items.length + res.events.length === 0;
  return (
    <div className="search-overlay" role="dialog" aria-label="Search">
      <form method="get" action={appPath(appName) + "/search"} className="search-form">
        <input type="search" name="q" placeholder="Search" aria-label="Search" autoFocus value={q} onChange={(e) => setQ(e.target.value)} />
        <button type="button" className="icon-button" aria-label="Close search" onClick={onClose}>
          <Icon name="CLOSE" />
        </button>
      </form>
      {error && <p className="field-error">{error}</p>}
      {res && <SearchGroups res={res} />}
      {empty && <p className="empty">{"Nothing found for “" + res!.query + "”"}</p>}
    </div>
  );
}

export function SearchGroups({ res }: { res: SearchResults }) {
  const groups: [string, typeof res.posts][] = [
    ["Posts", res.posts],
    ["Store", res.items],
    ["Events", res.events],
  ];
  return (
    <div className="search-results">
      {groups
        .filter(([, hits]) => hits.length > 0)
        .map(([label, hits]) => (
          <section key={label}>
            <h2>{label}</h2>
            <ul>
              {hits.map((h) => (
                <li key={h.id}>
                  <a href={h.link}>
                    <strong>{h.title || "(no text)"}</strong>
                    {h.snippet && <span className="meta">{h.snippet}</span>}
                  </a>
                </li>
              ))}
            </ul>
          </section>
        ))}
    </div>
  );
}
