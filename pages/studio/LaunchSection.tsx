import type { LaunchStep, PageProps, StudioData } from "../lib/types";
import { appBase } from "../lib/links";

// LaunchSection is the studio's launch checklist (issue 43 item 1): each
// step done or not as the app's data says, a link to the screen that does
// it, the previews as a visitor and as a member, then Publish (Unpublish
// once published). Plain forms: it all works without JavaScript.
export function LaunchSection({ props }: { props: PageProps<StudioData> }) {
  const app = props.app!;
  const l = props.data.launch!;
  const base = appBase(app);
  const links: Record<LaunchStep["key"], { href: string; label: string }[]> = {
    profile: [
      { href: base + "/studio", label: "Profile" },
      { href: base + "/studio/theme", label: "Theme" },
    ],
    earn: [
      { href: base + "/studio/plans", label: "Tiers" },
      { href: base + "/studio/features", label: "Donations" },
    ],
    payouts: [
      { href: base + "/studio/payouts", label: "Stripe" },
      { href: base + "/studio/paypal", label: "PayPal" },
    ],
    post: [{ href: base + "/create-post", label: "Write a post" }],
    preview: [],
  };
  return (
    <>
      <section className="studio-card launch" aria-labelledby="launch-h">
        <h2 id="launch-h">{l.published ? "Your app is published" : "Launch your app"}</h2>
        <p className="meta">
          {l.published
            ? "Everyone can open your app. Unpublish it to keep it to its staff again while you rework it."
            : "Only you and your staff can see your app for now. These steps get it ready for its first fans; publish it when you are happy with it."}
        </p>
        <p className="launch-progress">{l.done + " of " + l.steps.length + " steps done"}</p>
        <ol className="launch-steps">
          {l.steps.map((s) => (
            <li key={s.key} className={"launch-step" + (s.done ? " done" : "")} data-step={s.key}>
              <span className="launch-mark" aria-hidden="true">{s.done ? "✓" : ""}</span>
              <div className="launch-body">
                <h3>
                  {s.title}
                  <span className="visually-hidden">{s.done ? " (done)" : " (not done yet)"}</span>
                </h3>
                <p className="meta">{s.detail}</p>
                {links[s.key].length > 0 && (
                  <p className="launch-links">
                    {links[s.key].map((k) => (
                      <a key={k.href} href={k.href}>{k.label}</a>
                    ))}
                  </p>
                )}
                {s.key === "preview" && (
                  <form method="post" action={base + "/studio/preview"} className="launch-preview">
                    <button type="submit" name="mode" value="visitor" className="button button-secondary">Preview as a visitor</button>
                    <button type="submit" name="mode" value="member" className="button button-secondary">Preview as a member</button>
                  </form>
                )}
              </div>
            </li>
          ))}
        </ol>
        <form method="post" action={base + "/studio/launch"} className="launch-publish">
          {l.published ? (
            <button type="submit" name="action" value="unpublish" className="button button-secondary">Unpublish</button>
          ) : (
            <>
              <button type="submit" name="action" value="publish" className="button">Publish</button>
              {l.done < l.steps.length && (
                <p className="meta">You can publish now and finish the rest later.</p>
              )}
            </>
          )}
        </form>
      </section>
    </>
  );
}
