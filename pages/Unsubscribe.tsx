import type { PageProps } from "./lib/types";
import type { UnsubscribeData } from "./lib/generated";

type Props = PageProps<UnsubscribeData>;

const kindNames: Record<string, string> = {
  NEW_POST: "new posts",
  NEW_EVENT: "new events",
  REPLY: "replies",
  EVENT_UPDATE: "event changes",
  ORDER_STATUS: "order updates",
  NEW_ORDER: "new orders",
  DONATION: "donations",
  MEMBERSHIP_LAPSING: "membership updates",
  NEW_MEMBER: "new members",
  NEWSLETTER: "new posts by e-mail (the newsletter)",
};

// Unsubscribe is what a mail's unsubscribe link opens: one button that
// switches that kind of e-mail off (mail clients post the same URL).
export default function Unsubscribe(props: Props) {
  const d = props.data;
  const what = kindNames[d.kind] ?? "these";
  return (
    <main className="auth-page">
      <div className="auth-card">
        <h1>{d.done ? "You are unsubscribed" : "Unsubscribe"}</h1>
        {d.done ? (
          <p className="auth-message">{"You will no longer get e-mails about " + what + " from " + d.appName + "."}</p>
        ) : (
          <form method="post" action={d.action}>
            <p className="auth-message">{"Stop e-mails about " + what + " from " + d.appName + "?"}</p>
            <button type="submit" className="button auth-submit">
              Unsubscribe
            </button>
          </form>
        )}
        <p className="auth-back">
          <a href={"/apps/" + d.appName + "/profile"}>E-mail settings</a>
        </p>
      </div>
    </main>
  );
}

export function head() {
  return (
    <>
      <title>Unsubscribe</title>
      <meta name="robots" content="noindex" />
    </>
  );
}
