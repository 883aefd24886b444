import { Layout } from "./components/Layout";
import { displayTitle } from "./components/Header";
import { formatDate } from "./lib/format";
import { fromLine, noticeTime, type NotificationPagination, type NotificationView } from "./lib/notifications";
import type { PageProps } from "./lib/types";
import { appBase } from "./lib/links";

type Props = PageProps<{ notifications: NotificationView[]; pagination: NotificationPagination }>;

// Notifications: the panel as a page, for the bell without JavaScript. Mark
// All as Read is a form; Previous/Next are links.
export default function Notifications(props: Props) {
  const app = props.app!;
  const base = appBase(app);
  const { notifications, pagination } = props.data;
  return (
    <Layout props={props}>
      <div className="notifications-page">
        <h1 className="page-title">Notifications</h1>
        {notifications.length > 0 && (
          <form method="post" action={base + "/notifications/read"}>
            <button type="submit" className="button button-secondary">
              Mark All as Read
            </button>
          </form>
        )}
        {notifications.length === 0 ? (
          <p className="empty">No notifications yet</p>
        ) : (
          <ul className="notification-list">
            {notifications.map((n) => (
              <li key={n.id}>
                <a href={n.link || base}>
                  <span className="notification-text">{n.content}</span>
                  <span className="meta">
                    {fromLine(n)} · {noticeTime(n.createdAt, props.now, formatDate)}
                  </span>
                </a>
              </li>
            ))}
          </ul>
        )}
        {pagination.totalPages > 1 && (
          <nav className="pager" aria-label="Notification pages">
            {pagination.hasPrev ? (
              <a className="button button-secondary" href={base + "/notifications?page=" + (pagination.page - 1)}>
                Previous
              </a>
            ) : (
              <span className="button button-secondary disabled">Previous</span>
            )}
            <span>
              {pagination.page} of {pagination.totalPages}
            </span>
            {pagination.hasNext ? (
              <a className="button button-secondary" href={base + "/notifications?page=" + (pagination.page + 1)}>
                Next
              </a>
            ) : (
              <span className="button button-secondary disabled">Next</span>
            )}
          </nav>
        )}
        <p>
          <a href={base + "/profile#notification-settings"}>Notification settings</a>
        </p>
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  return (
    <>
      <title>{"Notifications · " + (props.app ? displayTitle(props.app) : "Marquee")}</title>
      <meta name="robots" content="noindex" />
    </>
  );
}
