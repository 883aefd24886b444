import { AuthButtons } from "./components/AuthButtons";
import { Layout } from "./components/Layout";
import { displayTitle } from "./components/Header";
import { Island } from "./lib/Island";
import ProfileActions from "../islands/ProfileActions";
import ProfilePictureUpload from "../islands/ProfilePictureUpload";
import PushToggle from "../islands/PushToggle";
import { kindLabels } from "./lib/notifications";
import { formatDate, formatMoney } from "./lib/format";
import type { AccountUser, DonorStanding, PageProps, SubscriptionStatus } from "./lib/types";
import { appBase } from "./lib/links";

type NotificationPrefs = {
  mutedAll: boolean; mutedKinds: string[]; kinds: string[]; emailMutedAll: boolean; emailMutedKinds: string[]; emailKinds?: string[]; emailDigest?: boolean;
};
type Props = PageProps<{
  user: AccountUser | null;
  isCreator: boolean;
  notifications: NotificationPrefs | null;
  membership: SubscriptionStatus | null;
  donor: DonorStanding | null;
  canSeeDonations: boolean;
  pictureNotice: string;
  pictureOk: boolean;
  joined: boolean;
}>;

const APP_STATUS: Record<string, string> = { PUBLIC: "Public", SUSPENDED: "Suspended" };

const STATUS_TEXT: Record<string, string> = {
  ACTIVE: "Active",
  PAST_DUE: "Payment failed",
  CANCELED: "Cancelled",
  EXPIRED: "Ended",
};

// Membership: the paid membership and its Cancel / Keep button (a form, so
// it works without JavaScript).
function Membership({ m, base, joined }: { m: SubscriptionStatus; base: string; joined: boolean }) {
  if (m.status === "NONE") return null;
  const end = m.currentPeriodEnd ? formatDate(m.currentPeriodEnd) : "";
  return (
    <section className="profile-membership" aria-label="Membership">
      <h2>Membership</h2>
      {joined && (
        <p className="notice" role="status">
          {"Welcome! Your membership is active" + (m.currentPeriodEnd ? " until " + formatDate(m.currentPeriodEnd) : "") + "."}
        </p>
      )}
      <p>
        {m.plan ? m.plan.name + " · " + formatMoney(m.plan.price, m.plan.currency) + " / " + (m.plan.billingCycle === "YEARLY" ? "year" : "month") : "Membership"}
        <span className="badge">{STATUS_TEXT[m.status] ?? m.status}</span>
      </p>
      {m.status === "ACTIVE" && !m.cancelAtPeriodEnd && <p className="meta">{"Renews on " + end}</p>}
      {m.status === "ACTIVE" && m.cancelAtPeriodEnd && <p className="meta">{"Cancelled: access until " + end}</p>}
      {m.status === "PAST_DUE" && m.graceUntil && (
        <p className="field-error">
          {"The renewal payment failed. " +
            (m.renewedBy === "paypal"
              ? "Update your payment method in PayPal before "
              : m.renewedBy === "stripe"
                ? "Update your card before "
                : "Top up your wallet before ") +
            formatDate(m.graceUntil) +
            " to keep access."}
        </p>
      )}
      {(m.status === "ACTIVE" || m.status === "PAST_DUE") && !(m.renewedBy === "paypal" && m.cancelAtPeriodEnd) && (
        <form method="post" action={base + "/profile/membership"}>
          <input type="hidden" name="cancel" value={m.cancelAtPeriodEnd ? "0" : "1"} />
          <button type="submit" className="button button-secondary">
            {m.cancelAtPeriodEnd ? "Keep membership" : "Cancel membership"}
          </button>
        </form>
      )}
    </section>
  );
}

// Profile: who you are in this app, follow or unfollow, sign out, back to
// the app. The creator also sees the app's status, version and badge.
// Visitors get sign-in and sign-up links.
export default function Profile(props: Props) {
  const app = props.app!;
  const base = appBase(app);
  const user = props.data.user;
  const title = displayTitle(app);

  if (!user) {
    return (
      <Layout props={props}>
        <div className="profile placeholder">
          <h1>Profile</h1>
          <p>Sign in to follow {title}, see your profile and get notified.</p>
          <AuthButtons authUrl={props.authUrl} appName={app.name} className="center" />
          <p>
            <a href={base || "/"}>{"Back to " + title}</a>
          </p>
        </div>
      </Layout>
    );
  }

  const picture = user.profilePicture?.signedUrl ?? "";
  return (
    <Layout props={props}>
      <div className="profile">
        <div className="profile-head">
          {/* The picture (or the initial) with its upload button. */}
          <Island name="ProfilePictureUpload" component={ProfilePictureUpload} props={{ pictureUrl: picture, username: user.username, appName: app.name,
            notice: props.data.pictureNotice, noticeOk: props.data.pictureOk }} when="visible" />
          <div>
            <h1>@{user.username}</h1>
            <p className="meta">{user.email.email}</p>
            {props.data.isCreator && <span className="badge">{"Creator of " + title}</span>}
            {props.viewer.permissions.canManage && (
              <p className="studio-link"><a className="button button-secondary" href={appBase(app) + "/studio"}>Open studio</a></p>
            )}
            {props.data.donor?.tier && (
              <span className="badge tier-badge" title={"Donated " + formatMoney(props.data.donor.total, "USD")}>
                {props.data.donor.tier.name}
              </span>
            )}
          </div>
        </div>

        {props.data.isCreator && (
          <dl className="app-facts">
            <dt>App status</dt>
            <dd>{APP_STATUS[app.status] ?? app.status}</dd>
            <dt>Version</dt>
            <dd>{app.version}</dd>
          </dl>
        )}

        <Island
          name="ProfileActions"
          component={ProfileActions}
          props={{
            appId: app.id,
            appName: app.name,
            authUrl: props.authUrl,
            role: props.viewer.role,
            canFollow: props.viewer.permissions.canFollow,
            canUnfollow: props.viewer.permissions.canUnfollow,
          }}
        />

        {props.data.membership && <Membership m={props.data.membership} base={base} joined={props.data.joined} />}

        <p>
          <a className="account-settings-link" href={props.authUrl + "/authenticate/account?app=" + encodeURIComponent(app.name)}>
            Account settings
          </a>
        </p>

        {props.data.canSeeDonations && (
          <p>
            <a href={base + "/donations"}>Donations</a>
          </p>
        )}

        {props.viewer.permissions.canAccessStore && (
          <nav className="profile-links" aria-label="Shopping">
            <a className="button button-secondary" href={base + "/orders"}>My Orders</a>
            <a className="button button-secondary" href={base + "/transactions"}>Wallet</a>
          </nav>
        )}

        <section className="profile-push" aria-label="Push notifications">
          <h2>Push notifications</h2>
          <Island
            name="PushToggle"
            component={PushToggle}
            props={{ appId: app.id, appName: app.name, onDomain: app.onDomain, member: props.viewer.permissions.canNotifications }}
            when="visible"
          />
        </section>

        {props.data.notifications && <NotificationSettings base={base} prefs={props.data.notifications} />}

        <p>
          <a href={base || "/"}>{"Back to " + title}</a>
        </p>
      </div>
    </Layout>
  );
}

// NotificationSettings: mute the app, or some kinds, as a plain form.
function NotificationSettings({ base, prefs }: { base: string; prefs: NotificationPrefs }) {
  return (
    <section className="notification-settings" id="notification-settings" aria-label="Notification settings">
      <h2>Notification settings</h2>
      <form method="post" action={base + "/notifications/settings"}>
        <label className="check">
          <input type="checkbox" name="mutedAll" value="1" defaultChecked={prefs.mutedAll} />
          <span>Mute all notifications from this app</span>
        </label>
        <fieldset>
          <legend>Mute only:</legend>
          {prefs.kinds.map((k) => (
            <label className="check" key={k}>
              <input type="checkbox" name="mutedKinds" value={k} defaultChecked={prefs.mutedKinds.includes(k)} />
              <span>{kindLabels[k] ?? k}</span>
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>E-mail (receipts and account mail always come):</legend>
          <input type="hidden" name="emailForm" value="1" />
          <label className="check">
            <input type="checkbox" name="emailMutedAll" value="1" defaultChecked={prefs.emailMutedAll} />
            <span>No other e-mail from this app</span>
          </label>
          <label className="check">
            <input type="checkbox" name="emailDigest" value="1" defaultChecked={prefs.emailDigest} />
            <span>One mail a week with the new posts and events, instead of a mail for each post</span>
          </label>
          {(prefs.emailKinds ?? prefs.kinds).map((k) => (
            <label className="check" key={"email-" + k}>
              <input type="checkbox" name="emailMutedKinds" value={k} defaultChecked={prefs.emailMutedKinds.includes(k)} />
              <span>{"No e-mail about " + lowerFirst(kindLabels[k] ?? k)}</span>
            </label>
          ))}
        </fieldset>
        <button type="submit" className="button">
          Save notification settings
        </button>
      </form>
    </section>
  );
}

export function head(props: Props) {
  return (
    <>
      <title>{"Profile · " + (props.app ? displayTitle(props.app) : "Marquee")}</title>
      <meta name="description" content={"Your profile, orders and notification settings on " + (props.app ? displayTitle(props.app) : "Marquee") + "."} />
      <meta name="robots" content="noindex" />
    </>
  );
}

// lowerFirst lowers a label's first letter only ("Changes to events I
// attend" stays with its "I").
function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}
