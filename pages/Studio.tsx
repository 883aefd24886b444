import { Layout } from "./components/Layout";
import { StudioNav } from "./components/StudioNav";
import { formatDate, formatMoney } from "./lib/format";
import { statusLabels } from "./lib/orders";
import type { PageProps, StudioData } from "./lib/types";
import { HBars, StackedBars } from "./studio/Charts";
import { FieldError, cls } from "./studio/fields";
import { NewsletterSection } from "./studio/NewsletterSection";
import { ShippingSection } from "./studio/ShippingSection";
import { DataSection } from "./studio/DataSection";
import { OffersSection } from "./studio/OffersSection";
import { LaunchSection } from "./studio/LaunchSection";
import { DomainSection } from "./studio/DomainSection";
import { Island } from "./lib/Island";
import StudioImage from "../islands/StudioImage";
import ThemeForm from "../islands/ThemeForm";
import { appBase } from "./lib/links";

type Props = PageProps<StudioData>;

// Studio is the creator studio: one screen per section, every form a plain
// POST (the server redirects back or re-renders with field errors).
export default function Studio(props: Props) {
  const app = props.app!;
  const d = props.data;
  return (
    <Layout props={props} hideFooter>
      <div className="studio">
        <StudioNav app={app} viewer={props.viewer} current={d.section} />
        {d.notice && <p className="added-alert" role="status">{d.notice}</p>}
        {d.error && <p className="form-error" role="alert">{d.error}</p>}
        {d.section === "launch" && <LaunchSection props={props} />}
        {d.section === "profile" && <ProfileSection props={props} />}
        {d.section === "features" && <FeaturesSection props={props} />}
        {d.section === "plans" && <PlansSection props={props} />}
        {d.section === "offers" && <OffersSection props={props} />}
        {d.section === "members" && <MembersSection props={props} />}
        {d.section === "analytics" && <AnalyticsSection props={props} />}
        {d.section === "payouts" && <PayoutsSection props={props} />}
        {d.section === "paypal" && <PayPalSection props={props} />}
        {d.section === "newsletter" && <NewsletterSection props={props} />}
        {d.section === "theme" && <ThemeSection props={props} />}
        {d.section === "shipping" && <ShippingSection props={props} />}
        {d.section === "data" && <DataSection props={props} />}
        {d.section === "domain" && <DomainSection props={props} />}
      </div>
    </Layout>
  );
}

// ThemeSection is the Theme screen: the form (an island for the live
// sample; a plain form with a Preview button without JavaScript).
function ThemeSection({ props }: { props: Props }) {
  const d = props.data;
  const t = d.theme!;
  const base = appBase(props.app!) + "/studio/theme";
  const fields = d.form === "theme" ? d.fields : {};
  return (
    <>
    <section className="studio-card" aria-labelledby="theme-h">
      <h2 id="theme-h">Theme</h2>
      <p className="meta">
        Your colours, background, font and corners, on every page of your app, its sign-in and its mails. Colours must keep
        text readable (WCAG 2.2 AA: a contrast of at least 4.5:1); one that does not is refused with a suggestion.
      </p>
      {/* Every bundled font, so the sample can show each (a face is
          downloaded only when text uses it). */}
      <style>{t.fonts.filter((f) => f.file).map((f) =>
        `@font-face{font-family:"${f.family}";src:url(${f.file}) format("woff2");font-weight:${f.weights};font-style:normal;font-display:swap}`).join("")}</style>
      <Island name="ThemeForm" component={ThemeForm}
        props={{ action: base, previewAction: base + "/preview", theme: t.theme, fonts: t.fonts, fields }} />
    </section>
    <section className="studio-card" aria-labelledby="icon-h">
      <h2 id="icon-h">Icon</h2>
      <p className="meta">
        One square image, at least 192 × 192 px (512 × 512 or more is best): it becomes the browser tab's icon, the icon of
        your installed app, the picture in your mails and in link previews. Until you upload one, a monogram in your colours
        stands in.
      </p>
      {d.form === "icon" && d.error && <p className="form-error" role="alert">{d.error}</p>}
      <div className="icon-row">
        <img src={t.iconUrl} alt={t.iconUploaded ? "Your icon" : "Your monogram"} width={96} height={96} className="app-icon-preview" />
        <form method="post" action={appBase(props.app!) + "/studio/icon"} encType="multipart/form-data" className="studio-form">
          <label htmlFor="icon-file">{t.iconUploaded ? "Replace the icon" : "Upload an icon"}</label>
          <input id="icon-file" type="file" name="file" accept="image/png,image/jpeg,image/webp,image/gif" required />
          <button type="submit" className="button">Upload icon</button>
        </form>
        {t.iconUploaded && (
          <form method="post" action={appBase(props.app!) + "/studio/icon"}>
            <input type="hidden" name="remove" value="1" />
            <button type="submit" className="button button-secondary">Use the monogram</button>
          </form>
        )}
      </div>
    </section>
    </>
  );
}

// FOOTER_LABELS are the footer's tab names (SPEC.md section 2).
const FOOTER_LABELS: Record<string, string> = { HOME: "Home", COMMUNITY: "Feed", STORE: "Store", EVENTS: "Events", CHAT: "Chat" };

// PayoutPassword: every form that decides where the app's money goes asks
// for the creator's password again.
function PayoutPassword({ d }: { d: StudioData }) {
  return (
    <label className={cls(d, "password")}>
      Your password
      <input name="password" type="password" required autoComplete="current-password" />
      <FieldError d={d} name="password" />
    </label>
  );
}

function ProfileSection({ props }: { props: Props }) {
  const d = props.data;
  const p = d.profile!;
  const base = appBase(props.app!) + "/studio";
  const links = [...p.links, { id: "", title: "", url: "", icon: "", enabled: true }, { id: "", title: "", url: "", icon: "", enabled: true }];
  return (
    <>
      <section className="studio-card" aria-labelledby="profile-h">
        <h2 id="profile-h">Profile and look</h2>
        <form method="post" action={base + "/profile"} className="studio-form">
          {/* Enter in a field saves: the first submit button is the default
              (wordless, so "Save profile" is one button to readers and tests). */}
          <button type="submit" className="visually-hidden" tabIndex={-1} aria-hidden="true" />
          <div className={cls(d, "displayName")}>
            <label htmlFor="displayName">Display name</label>
            <input id="displayName" name="displayName" required maxLength={60} defaultValue={p.displayName} />
            <FieldError d={d} name="displayName" />
          </div>
          <div className={cls(d, "bio")}>
            <label htmlFor="bio">Bio</label>
            <textarea id="bio" name="bio" rows={5} defaultValue={p.bio} />
            <p className="meta">Basic HTML (links, bold, lists) is kept; anything unsafe is removed when shown.</p>
            <FieldError d={d} name="bio" />
          </div>
          <div className={cls(d, "metaDescription")}>
            <label htmlFor="metaDescription">Description (search engines)</label>
            <input id="metaDescription" name="metaDescription" maxLength={300} defaultValue={p.metaDescription} />
            <FieldError d={d} name="metaDescription" />
          </div>
          <div className={cls(d, "keywords")}>
            <label htmlFor="keywords">Keywords</label>
            <input id="keywords" name="keywords" maxLength={200} defaultValue={p.keywords} />
          </div>
          <div className="studio-row">
            <div className={cls(d, "lang")}>
              <label htmlFor="lang">Language</label>
              <input id="lang" name="lang" required maxLength={12} defaultValue={p.lang} placeholder="en" />
              <FieldError d={d} name="lang" />
            </div>
          </div>
          <fieldset className={"footer-order" + (d.fields.footerOrder ? " has-error" : "")}>
            <legend>Footer tabs</legend>
            <p className="meta">The order of the tabs at the bottom of your app. Tabs of features that are off are not shown.</p>
            <ol className="footer-order-list">
              {p.footerOrder.map((tab, i) => (
                <li key={tab}>
                  <input type="hidden" name="footerOrder" value={tab} />
                  <span>{FOOTER_LABELS[tab] ?? tab}</span>
                  <button type="submit" name="move" value={"up:" + tab} className="link-button" disabled={i === 0} aria-label={"Move " + (FOOTER_LABELS[tab] ?? tab) + " up"}>↑ Up</button>
                  <button type="submit" name="move" value={"down:" + tab} className="link-button" disabled={i === p.footerOrder.length - 1} aria-label={"Move " + (FOOTER_LABELS[tab] ?? tab) + " down"}>↓ Down</button>
                </li>
              ))}
            </ol>
            <FieldError d={d} name="footerOrder" />
          </fieldset>
          <button type="submit" className="button">Save profile</button>
        </form>
      </section>
      <section className="studio-card" aria-labelledby="images-h">
        <h2 id="images-h">Title image and banner</h2>
        {d.form === "images" && d.error && <p className="field-error">{d.error}</p>}
        <div className="studio-images">
          <Island name="StudioImage" component={StudioImage} when="visible"
            props={{ appId: props.app!.id, appName: props.app!.name, which: "title", label: "Title image (shown in the header)", url: p.titleUrl }} />
          <Island name="StudioImage" component={StudioImage} when="visible"
            props={{ appId: props.app!.id, appName: props.app!.name, which: "banner", label: "Banner (landing page, 3:1)", url: p.bannerUrl }} />
        </div>
      </section>
      <section className="studio-card" aria-labelledby="links-h">
        <h2 id="links-h">Link-in-bio</h2>
        {d.form === "links" && d.fields.links && <p className="field-error">{d.fields.links}</p>}
        <form method="post" action={base + "/links"} className="studio-form links-form">
          <label className="check"><input type="checkbox" name="linksEnabled" value="1" defaultChecked={p.linksEnabled} /> Links on</label>
          <label className="check"><input type="checkbox" name="showLinkInBio" value="1" defaultChecked={p.showLinkInBio} /> Show them on the landing page</label>
          <p className="meta">Order by number; clear a row's title and address to remove it.</p>
          {links.map((l, i) => (
            <fieldset key={i} className="link-row">
              <legend className="visually-hidden">Link {i + 1}</legend>
              <input name="linkPosition" type="number" min={1} defaultValue={String(i + 1)} aria-label={"Position of link " + (i + 1)} className="pos" />
              <input name="linkTitle" defaultValue={l.title} placeholder="Title" aria-label={"Title of link " + (i + 1)} maxLength={80} />
              <input name="linkUrl" type="url" defaultValue={l.url} placeholder="https://…" aria-label={"Address of link " + (i + 1)} />
              <label className="check"><input type="checkbox" name="linkEnabled" value={String(i)} defaultChecked={l.enabled} /> On</label>
            </fieldset>
          ))}
          <button type="submit" className="button">Save links</button>
        </form>
      </section>
    </>
  );
}

function FeaturesSection({ props }: { props: Props }) {
  const d = props.data;
  const f = d.features!;
  const base = appBase(props.app!) + "/studio";
  const tiers = [...f.tiers, { id: "", name: "", requiredAmount: 0, description: "" }, { id: "", name: "", requiredAmount: 0, description: "" }];
  const check = (name: string, label: string, on: boolean) => (
    <label className="check"><input type="checkbox" name={name} value="1" defaultChecked={on} /> {label}</label>
  );
  const dollars = (c: number) => (c > 0 ? (c % 100 === 0 ? String(c / 100) : (c / 100).toFixed(2)) : "");
  return (
    <section className="studio-card" aria-labelledby="features-h">
      <h2 id="features-h">Features</h2>
      <form method="post" action={base + "/features"} className="studio-form">
        <fieldset>
          <legend>Community</legend>
          {check("community", "Community feed", f.community)}
          {check("stories", "Stories", f.stories)}
          {check("allowReactions", "Allow reactions", f.allowReactions)}
          {check("allowComments", "Allow comments", f.allowComments)}
        </fieldset>
        <fieldset>
          <legend>Sections</legend>
          {check("store", "Store", f.store)}
          {check("events", "Events", f.events)}
          {check("chat", "Chat", f.chat)}
          {check("donations", "Donations", f.donations)}
        </fieldset>
        <fieldset>
          <legend>Donations</legend>
          <div className={cls(d, "suggestedAmounts")}>
            <label htmlFor="suggestedAmounts">Suggested amounts ($)</label>
            <input id="suggestedAmounts" name="suggestedAmounts" defaultValue={f.suggestedAmounts} placeholder="5, 10, 25" />
            <FieldError d={d} name="suggestedAmounts" />
          </div>
          <p className="label">Achievement tiers</p>
          <FieldError d={d} name="tiers" />
          {tiers.map((t, i) => (
            <div key={i} className="tier-row">
              <input name="tierName" defaultValue={t.name} placeholder="Tier name" aria-label={"Name of tier " + (i + 1)} maxLength={60} />
              <input name="tierAmount" defaultValue={dollars(t.requiredAmount)} placeholder="Amount ($)" inputMode="decimal" aria-label={"Amount of tier " + (i + 1)} />
              <input name="tierDescription" defaultValue={t.description} placeholder="Description (optional)" aria-label={"Description of tier " + (i + 1)} maxLength={300} />
            </div>
          ))}
        </fieldset>
        <fieldset>
          <legend>Subscription gating</legend>
          <label className="check"><input type="radio" name="gating" value="off" defaultChecked={f.gating === "off"} /> Off: everything is open to members</label>
          <label className="check"><input type="radio" name="gating" value="required" defaultChecked={f.gating === "required"} /> Required: only subscribers get past the landing page</label>
          <label className="check"><input type="radio" name="gating" value="landing" defaultChecked={f.gating === "landing"} /> Landing page only: non-subscribers see the landing page without previews</label>
          <FieldError d={d} name="gating" />
          <div className={cls(d, "gatingDescription")}>
            <label htmlFor="gatingDescription">What subscribers get (shown at the gate)</label>
            <textarea id="gatingDescription" name="gatingDescription" rows={2} maxLength={500} defaultValue={f.gatingDescription} />
          </div>
          <div className="gate-preview" aria-label="Preview">
            <strong>A non-subscriber sees:</strong>{" "}
            {f.preview.gated
              ? "the landing page (" + (f.preview.seesPreviews ? "with recent posts, events and items" : "banner, bio, links and plans only") + "), cart, checkout and profile; the footer is hidden."
              : "everything members see."}
            {f.preview.gated && f.preview.description && <p className="meta">“{f.preview.description}”</p>}
          </div>
        </fieldset>
        <button type="submit" className="button">Save features</button>
      </form>
    </section>
  );
}

function PlansSection({ props }: { props: Props }) {
  const d = props.data;
  const base = appBase(props.app!) + "/studio";
  const plans = d.plans ?? [];
  const edit = d.planEdit;
  const dollars = (c: number | null | undefined) => (c == null ? "" : c % 100 === 0 ? String(c / 100) : (c / 100).toFixed(2));
  type V = { name: string; description: string; benefits: string; monthlyPrice: string; yearlyPrice: string; trialDays: string; trialCardRequired: boolean; state: string };
  const stateLabel = (s: string) => (s === "ON_SALE" ? "On sale" : s === "ARCHIVED" ? "Archived" : "Draft");
  const form = (id: string, v: V, submit: string) => {
    const errs = edit && edit.itemId === id ? d.fields : {};
    return (
      <form method="post" action={base + "/plans" + (id ? "/" + id : "")} className="studio-form plan-form">
        <div className={"field" + (errs.name ? " has-error" : "")}>
          <label htmlFor={"plan-name-" + id}>Name</label>
          <input id={"plan-name-" + id} name="name" required maxLength={80} defaultValue={v.name} />
          {errs.name && <p className="field-error">{errs.name}</p>}
        </div>
        <div className="studio-row">
          <div className={"field" + (errs.monthlyPrice ? " has-error" : "")}>
            <label htmlFor={"plan-monthly-" + id}>Monthly price ($)</label>
            <input id={"plan-monthly-" + id} name="monthlyPrice" inputMode="decimal" defaultValue={v.monthlyPrice} />
            {errs.monthlyPrice && <p className="field-error">{errs.monthlyPrice}</p>}
          </div>
          <div className={"field" + (errs.yearlyPrice ? " has-error" : "")}>
            <label htmlFor={"plan-yearly-" + id}>Yearly price ($)</label>
            <input id={"plan-yearly-" + id} name="yearlyPrice" inputMode="decimal" defaultValue={v.yearlyPrice} />
            {errs.yearlyPrice && <p className="field-error">{errs.yearlyPrice}</p>}
          </div>
        </div>
        <p className="meta">Give a monthly price, a yearly price, or both (members see what yearly saves).</p>
        <div className="studio-row">
          <div className={"field" + (errs.trialDays ? " has-error" : "")}>
            <label htmlFor={"plan-trial-" + id}>Free trial (days)</label>
            <input id={"plan-trial-" + id} name="trialDays" inputMode="numeric" defaultValue={v.trialDays} />
            {errs.trialDays && <p className="field-error">{errs.trialDays}</p>}
            <label className="check">
              <input type="checkbox" name="trialCardRequired" value="1" defaultChecked={v.trialCardRequired} /> Card required for the trial
            </label>
          </div>
          <div className={"field" + (errs.state ? " has-error" : "")}>
            <label htmlFor={"plan-state-" + id}>State</label>
            <select id={"plan-state-" + id} name="state" defaultValue={v.state}>
              <option value="DRAFT">Draft</option>
              <option value="ON_SALE">On sale</option>
              <option value="ARCHIVED">Archived</option>
            </select>
            {errs.state && <p className="field-error">{errs.state}</p>}
          </div>
        </div>
        <div className="field">
          <label htmlFor={"plan-desc-" + id}>Description</label>
          <textarea id={"plan-desc-" + id} name="description" rows={2} maxLength={2000} defaultValue={v.description} />
        </div>
        <div className="field">
          <label htmlFor={"plan-benefits-" + id}>Benefits (one per line)</label>
          <textarea id={"plan-benefits-" + id} name="benefits" rows={3} defaultValue={v.benefits} />
        </div>
        <button type="submit" className="button">{submit}</button>
      </form>
    );
  };
  const newValues: V = edit && !edit.itemId ? edit : { name: "", description: "", benefits: "", monthlyPrice: "", yearlyPrice: "", trialDays: "0", trialCardRequired: false, state: "ON_SALE" };
  const ranked = plans.filter((p) => p.id && !p.archived);
  return (
    <>
      <section className="studio-card" aria-labelledby="plans-h">
        <h2 id="plans-h">Membership tiers</h2>
        <p className="meta">
          {"Tiers in order, first to top; following the app is the level below the first. Members see the tiers on sale at "}
          <a href={appBase(props.app!) + "/membership"}>the membership page</a>.
        </p>
        {plans.length === 0 && <p className="empty">No tiers yet.</p>}
        <ol className="card-list plan-list">
          {plans.map((p) => {
            const v: V = edit && edit.itemId === p.itemId ? edit
              : { name: p.name, description: p.description, benefits: p.benefits.join("\n"), monthlyPrice: dollars(p.monthlyPrice),
                  yearlyPrice: dollars(p.yearlyPrice), trialDays: String(p.trialDays), trialCardRequired: p.trialCardRequired, state: p.state };
            const at = ranked.findIndex((r) => r.itemId === p.itemId);
            const priced = p.monthlyPrice != null || p.yearlyPrice != null;
            return (
              <li key={p.itemId} className={"card plan-card" + (p.archived ? " archived" : "")} data-plan={p.name} data-state={p.state}>
                <div className="plan-head">
                  <strong>{p.name}</strong>
                  <span>
                    {p.monthlyPrice != null && formatMoney(p.monthlyPrice, p.currency) + " / month"}
                    {p.monthlyPrice != null && p.yearlyPrice != null && " · "}
                    {p.yearlyPrice != null && formatMoney(p.yearlyPrice, p.currency) + " / year"}
                  </span>
                </div>
                <p className="meta">
                  {p.archived ? "Archived · " : p.state === "ON_SALE" ? "On sale · " : priced ? "Draft · " : "Draft: choose a billing cycle to publish · "}
                  {p.trialDays > 0 ? p.trialDays + "-day free trial" + (p.trialCardRequired ? " (card required)" : "") + " · " : ""}
                  {p.members} {p.members === 1 ? "member" : "members"}
                </p>
                {p.benefits.length > 0 && <ul className="benefits">{p.benefits.map((b) => <li key={b}>{b}</li>)}</ul>}
                {at >= 0 && (
                  <div className="tier-move">
                    <form method="post" action={base + "/plans/" + p.itemId + "/move"}>
                      <input type="hidden" name="direction" value="up" />
                      <button type="submit" className="button button-secondary" disabled={at === 0} aria-label={"Move " + p.name + " up"}>Up</button>
                    </form>
                    <form method="post" action={base + "/plans/" + p.itemId + "/move"}>
                      <input type="hidden" name="direction" value="down" />
                      <button type="submit" className="button button-secondary" disabled={at === ranked.length - 1} aria-label={"Move " + p.name + " down"}>Down</button>
                    </form>
                  </div>
                )}
                {!p.archived && (
                  <>
                    <details open={!!(edit && edit.itemId === p.itemId) || !priced}>
                      <summary>Edit</summary>
                      {form(p.itemId, v, "Save tier")}
                    </details>
                    <form method="post" action={base + "/plans/" + p.itemId + "/archive"} className="archive-form">
                      <button type="submit" className="button button-secondary">Archive</button>
                      <span className="meta"> Members who hold it keep it until they leave.</span>
                    </form>
                  </>
                )}
                {p.archived && (
                  <form method="post" action={base + "/plans/" + p.itemId + "/state"} className="archive-form">
                    <input type="hidden" name="state" value="DRAFT" />
                    <button type="submit" className="button button-secondary">Restore as draft</button>
                    <span className="meta">{" " + stateLabel(p.state)}</span>
                  </form>
                )}
              </li>
            );
          })}
        </ol>
      </section>
      <section className="studio-card" aria-labelledby="new-plan-h">
        <h2 id="new-plan-h">New tier</h2>
        {form("", newValues, "Create tier")}
      </section>
    </>
  );
}

const roleLabels: Record<string, string> = {
  CREATOR: "Creator", ADMIN: "Admin", MODERATOR: "Moderator", SUBSCRIBER: "Subscriber", FOLLOWER: "Follower",
};

// dollarsText writes cents as the amount a form shows: 2500 is "25", 1250 "12.50".
function dollarsText(c: number): string {
  return c % 100 === 0 ? String(c / 100) : (c / 100).toFixed(2);
}

// CreditForm gives one member wallet credit (the creator only). The hidden
// key makes the form count once, however often it is sent; it folds away
// (a <details>, no JavaScript needed) and opens again when refused.
function CreditForm({ m, d, userId, username, action, back }: {
  m: NonNullable<StudioData["members"]>; d: StudioData; userId: string; username: string; action: string; back: string;
}) {
  const refused = d.form === "credit" && m.credit?.userId === userId ? m.credit : null;
  return (
    <details className="credit-fold" open={refused !== null}>
      <summary>Credit</summary>
      <form method="post" action={action} className="credit-form">
        <input type="hidden" name="key" value={m.creditKey} />
        <input type="hidden" name="back" value={back} />
        {refused && d.error && <p className="field-error">{d.error}</p>}
        <label>Amount ($) <input name="amount" inputMode="decimal" required defaultValue={refused?.amount ?? ""} placeholder="5" aria-label={"Amount to credit @" + username} /></label>
        <label>Note <input name="note" maxLength={200} defaultValue={refused?.note ?? ""} placeholder="Shown in their wallet" aria-label={"Note for @" + username} /></label>
        <button type="submit" className="button button-secondary">Add credit</button>
      </form>
    </details>
  );
}

// GiftForm gives one member a tier for some months or for good, or ends
// their gift (the creator only): a fold like CreditForm, open again when
// refused.
function GiftForm({ m, d, member, action, back }: {
  m: NonNullable<StudioData["members"]>; d: StudioData; member: NonNullable<StudioData["members"]>["members"][number]; action: string; back: string;
}) {
  if (!m.canGift || m.tiers.length === 0) return null;
  const refused = d.form === "gift:" + member.userId;
  const giftActive = member.gift && member.planStatus === "ACTIVE";
  return (
    <details className="gift-fold" open={refused}>
      <summary>Give a membership</summary>
      <form method="post" action={action} className="gift-form">
        <input type="hidden" name="back" value={back} />
        {refused && d.error && <p className="field-error">{d.error}</p>}
        <label>Tier <select name="tierId" aria-label={"Tier to give @" + member.username}>
          {m.tiers.map((t) => <option key={t.id} value={t.id}>{t.name}</option>)}
        </select></label>
        <label>For <select name="months" defaultValue="1" aria-label={"How long for @" + member.username}>
          {[1, 3, 6, 12].map((n) => <option key={n} value={String(n)}>{n === 1 ? "1 month" : n + " months"}</option>)}
          <option value="0">For good</option>
        </select></label>
        <button type="submit" className="button button-secondary">Give</button>
      </form>
      {giftActive && (
        <form method="post" action={action} className="gift-form">
          <input type="hidden" name="back" value={back} />
          <input type="hidden" name="end" value="1" />
          <button type="submit" className="button button-danger">End gift</button>
        </form>
      )}
    </details>
  );
}

function MembersSection({ props }: { props: Props }) {
  const d = props.data;
  const m = d.members!;
  const base = appBase(props.app!) + "/studio/members";
  // goja has no URLSearchParams: the query is put together by hand.
  const query = (page: number) => {
    const q: string[] = [];
    if (m.query) q.push("q=" + encodeURIComponent(m.query));
    if (m.role) q.push("role=" + m.role);
    if (m.tier) q.push("tier=" + encodeURIComponent(m.tier));
    if (page > 1) q.push("page=" + page);
    return q.length ? "?" + q.join("&") : "";
  };
  const p = m.pagination;
  return (
    <>
      <section className="studio-card" aria-labelledby="members-h">
        <h2 id="members-h">Members</h2>
        <form method="get" action={base} className="member-search" role="search">
          <input type="search" name="q" defaultValue={m.query} placeholder="Search username or email" aria-label="Search members" />
          <select name="role" defaultValue={m.role} aria-label="Role">
            <option value="">All roles</option>
            {Object.keys(roleLabels).map((r) => <option key={r} value={r}>{roleLabels[r]}</option>)}
          </select>
          {m.tiers.length > 0 && (
            <select name="tier" defaultValue={m.tier} aria-label="Tier">
              <option value="">All tiers</option>
              {m.tiers.map((t) => <option key={t.id} value={t.id}>{t.name}</option>)}
            </select>
          )}
          <button type="submit" className="button button-secondary">Filter</button>
        </form>
        <p className="meta">{p.total} {p.total === 1 ? "member" : "members"}</p>
        {m.members.length === 0 ? (
          <p className="empty">No members match.</p>
        ) : (
          <div className="table-wrap">
            <table className="studio-table members-table">
              <thead>
                <tr><th>Member</th><th>Role</th><th>Joined</th><th>Membership</th><th>Donor tier</th><th>Actions</th></tr>
              </thead>
              <tbody>
                {m.members.map((x) => (
                  <tr key={x.userId} data-member={x.username}>
                    <td><strong>@{x.username}</strong><br /><span className="meta">{x.email}</span></td>
                    <td data-label="Role">{roleLabels[x.role] ?? x.role}</td>
                    <td data-label="Joined">{formatDate(x.joinedAt)}</td>
                    <td data-label="Membership">{x.plan ? x.plan + " (" + (x.gift ? "gift, " : "") + x.planStatus.toLowerCase().replace("_", " ") + ")" : "—"}</td>
                    <td data-label="Donor tier">{x.donorTier || (x.donated > 0 ? formatMoney(x.donated) : "—")}</td>
                    <td>
                      {m.manageable[x.userId] ? (
                        <div className="member-actions">
                          <form method="post" action={base + "/" + x.userId} className="role-form">
                            <input type="hidden" name="back" value={query(p.page)} />
                            <select name="role" defaultValue={x.role} aria-label={"Role of @" + x.username}>
                              {!m.grantable.includes(x.role) && <option value={x.role}>{roleLabels[x.role] + " (current)"}</option>}
                              {m.grantable.map((r) => <option key={r} value={r}>{roleLabels[r]}</option>)}
                            </select>
                            <button type="submit" className="button button-secondary">Change</button>
                          </form>
                          <form method="post" action={base + "/" + x.userId} className="remove-form">
                            <input type="hidden" name="role" value="NONE" />
                            <input type="hidden" name="back" value={query(p.page)} />
                            <button type="submit" className="button button-danger">Remove</button>
                          </form>
                        </div>
                      ) : (
                        !m.canCredit && <span className="meta">—</span>
                      )}
                      {m.canCredit && <CreditForm m={m} d={d} userId={x.userId} username={x.username} action={base + "/" + x.userId + "/credit"} back={query(p.page)} />}
                      <GiftForm m={m} d={d} member={x} action={base + "/" + x.userId + "/gift"} back={query(p.page)} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {p.totalPages > 1 && (
          <nav className="pager" aria-label="Pages">
            {p.hasPrev && <a href={base + query(p.page - 1)}>Previous</a>}
            <span>{p.page} of {p.totalPages}</span>
            {p.hasNext && <a href={base + query(p.page + 1)}>Next</a>}
          </nav>
        )}
      </section>
      <section className="studio-card" aria-labelledby="wallet-h">
        <h2 id="wallet-h">Wallet</h2>
        <form method="post" action={appBase(props.app!) + "/studio/wallet"} className="studio-form welcome-credit-form">
          <div className={cls(d, "welcomeCredit")}>
            <label htmlFor="welcomeCredit">Welcome credit for new members ($)</label>
            <input id="welcomeCredit" name="welcomeCredit" inputMode="decimal" defaultValue={m.welcomeCreditText ?? dollarsText(m.welcomeCredit)} placeholder="0" />
            <p className="meta">Put in the wallet of each member who follows the app for the first time, once. 0 gives none.</p>
            <FieldError d={d} name="welcomeCredit" />
          </div>
          <button type="submit" className="button">Save welcome credit</button>
        </form>
        {m.canCredit && <p className="meta">To give one member credit, use Credit beside them above: it is in the audit log, and a form sent twice credits once.</p>}
      </section>
      <section className="studio-card" aria-labelledby="audit-h">
        <h2 id="audit-h">Audit log</h2>
        <p>
          {"Every role change and removal here, every change to the app's settings and plans, and every moderation action is kept in one log: who, what, which target, when and why. "}
          <a href={appBase(props.app!) + "/studio/moderation#log-title"} data-testid="audit-link">
            Open the audit log
          </a>
        </p>
      </section>
    </>
  );
}

function AnalyticsSection({ props }: { props: Props }) {
  const d = props.data;
  const a = d.analytics!;
  const base = appBase(props.app!) + "/studio";
  const labels = a.revenue.map((r) => r.period);
  const range = "?from=" + a.from + "&to=" + a.to;
  const money = (n: number) => formatMoney(n);
  return (
    <>
      <form method="get" action={base + "/analytics"} className="studio-card range-form">
        <div className={cls(d, "from")}>
          <label htmlFor="from">From</label>
          <input id="from" name="from" type="date" defaultValue={a.from} />
        </div>
        <div className={cls(d, "to")}>
          <label htmlFor="to">To</label>
          <input id="to" name="to" type="date" defaultValue={a.to} />
        </div>
        <div className="field">
          <label htmlFor="bucket">By</label>
          <select id="bucket" name="bucket" defaultValue={a.bucket}>
            <option value="day">Day</option>
            <option value="week">Week</option>
            <option value="month">Month</option>
          </select>
        </div>
        <button type="submit" className="button">Show</button>
      </form>
      <p className="exports">
        Export CSV: <a href={base + "/export/orders.csv" + range}>Orders</a> · <a href={base + "/export/members.csv"}>Members</a> ·{" "}
        <a href={base + "/export/donations.csv" + range}>Donations</a>
      </p>
      <section className="studio-card" aria-labelledby="rev-h">
        <h2 id="rev-h">Revenue, net of refunds</h2>
        <p className="big-number">{money(a.revenueTotal.net)}</p>
        <StackedBars
          title="Revenue"
          labels={labels}
          format={money}
          series={[
            { label: "Orders", color: "#7c3aed", values: a.revenue.map((r) => r.orders) },
            { label: "Memberships", color: "#0ea5e9", values: a.revenue.map((r) => r.memberships) },
            { label: "Donations", color: "#f59e0b", values: a.revenue.map((r) => r.donations) },
            { label: "Tickets", color: "#10b981", values: a.revenue.map((r) => r.tickets) },
          ]}
        />
        <div className="table-wrap">
          {/* Gross - Refunds = Net on every row: four columns, so it fits a phone. */}
          <table className="studio-table revenue-table">
            <caption className="visually-hidden">Revenue by period</caption>
            <thead><tr><th>Period</th><th>Gross</th><th>Refunds</th><th>Net</th></tr></thead>
            <tbody>
              {[...a.revenue.filter((r) => r.gross !== 0), a.revenueTotal].map((r) => (
                <tr key={r.period} className={r.period === "Total" ? "total" : ""}>
                  <td>{r.period}</td><td>{money(r.gross)}</td><td>{r.refunds ? "−" + money(r.refunds) : money(0)}</td><td>{money(r.net)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <div className="table-wrap">
          {/* Where the net came from: the sources add up to Net. */}
          <table className="studio-table revenue-sources">
            <caption>Net by source</caption>
            <thead><tr><th>Source</th><th>Net</th></tr></thead>
            <tbody>
              {([["Orders", a.revenueTotal.orders], ["Memberships", a.revenueTotal.memberships], ["Donations", a.revenueTotal.donations], ["Tickets", a.revenueTotal.tickets]] as [string, number][]).map(([label, v]) => (
                <tr key={label}><td>{label}</td><td>{money(v)}</td></tr>
              ))}
              <tr className="total"><td>Total</td><td>{money(a.revenueTotal.net)}</td></tr>
            </tbody>
          </table>
        </div>
      </section>
      <section className="studio-card" aria-labelledby="mrr-h">
        <h2 id="mrr-h">Memberships now</h2>
        <p className="meta">Monthly recurring revenue: <strong data-testid="mrr">{money(a.recurring.mrr)}</strong> from {a.recurring.paid} paying {a.recurring.paid === 1 ? "member" : "members"}{a.recurring.gifted > 0 ? ", and " + a.recurring.gifted + " given a tier" : ""}.</p>
        {a.recurring.tiers.length > 0 && (
          <div className="table-wrap">
            <table className="studio-table recurring-tiers">
              <thead><tr><th>Tier</th><th>Paying</th><th>Given</th><th>MRR</th></tr></thead>
              <tbody>{a.recurring.tiers.map((t) => <tr key={t.tierId}><td>{t.name}</td><td>{t.paid}</td><td>{t.gifted}</td><td>{money(t.mrr)}</td></tr>)}</tbody>
            </table>
          </div>
        )}
      </section>
      {a.paidHistory.length > 0 && (
        <section className="studio-card" aria-labelledby="paid-h">
          <h2 id="paid-h">Paid members by tier</h2>
          <p className="meta">The last 12 months: who paid at each month's end, and churn (paying members at the month's start who stopped paying in it).</p>
          <div className="table-wrap">
            <table className="studio-table paid-history">
              <thead>
                <tr>
                  <th>Month</th>
                  {a.paidHistory[a.paidHistory.length - 1].byTier.map((t) => <th key={t.tierId}>{t.name}</th>)}
                  <th>Paying</th><th>Left</th><th>Churn</th>
                </tr>
              </thead>
              <tbody>
                {a.paidHistory.map((m) => (
                  <tr key={m.month}>
                    <td>{m.month}</td>
                    {a.paidHistory[a.paidHistory.length - 1].byTier.map((t) => <td key={t.tierId}>{m.byTier.find((b) => b.tierId === t.tierId)?.paid ?? 0}</td>)}
                    <td>{m.paid}</td>
                    <td>{m.left + " of " + m.atStart}</td>
                    <td data-testid={"churn-" + m.month}>{m.atStart > 0 ? (Math.round(m.churn * 1000) / 10).toFixed(1) + "%" : "–"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      <section className="studio-card" aria-labelledby="trials-h">
        <h2 id="trials-h">Trials and offers</h2>
        <p className="meta">
          {"In this range: "}
          <strong data-testid="trials-started">{a.trialsAndOffers.trialsStarted}</strong>{" trials started, "}
          <strong data-testid="trials-converted">{a.trialsAndOffers.trialsConverted}</strong>{" converted to paid, "}
          {a.trialsAndOffers.trialsEnded + " ended unpaid; "}
          <strong data-testid="offer-redemptions">{a.trialsAndOffers.redemptions}</strong>
          {" code " + (a.trialsAndOffers.redemptions === 1 ? "redemption" : "redemptions") + ". In a trial now: " + a.recurring.trialing + "."}
        </p>
        {a.trialsAndOffers.byCode.length > 0 && (
          <div className="table-wrap">
            <table className="studio-table offer-redemptions">
              <thead><tr><th>Code</th><th>Redemptions</th><th>Discount given</th></tr></thead>
              <tbody>{a.trialsAndOffers.byCode.map((c) => <tr key={c.code}><td>{c.code}</td><td>{c.redemptions}</td><td>{money(c.discount)}</td></tr>)}</tbody>
            </table>
          </div>
        )}
      </section>
      <section className="studio-card" aria-labelledby="mem-h">
        <h2 id="mem-h">Members</h2>
        <StackedBars
          title="Members by role"
          labels={labels}
          format={(n) => String(n)}
          series={[
            { label: "Followers", color: "#a78bfa", values: a.members.map((r) => r.followers) },
            { label: "Subscribers", color: "#0ea5e9", values: a.members.map((r) => r.subscribers) },
            { label: "Staff", color: "#111827", values: a.members.map((r) => r.moderators + r.admins + r.creators) },
          ]}
        />
        <div className="table-wrap">
          <table className="studio-table members-over-time">
            <thead><tr><th>Period</th><th>Followers</th><th>Subscribers</th><th>Moderators</th><th>Admins</th><th>Creator</th><th>New</th><th>Churned</th></tr></thead>
            <tbody>
              {a.members.map((r) => (
                <tr key={r.period}>
                  <td>{r.period}</td><td>{r.followers}</td><td>{r.subscribers}</td><td>{r.moderators}</td><td>{r.admins}</td>
                  <td>{r.creators}</td><td>{r.newMembers}</td><td>{r.churned}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p className="meta">Members by the role they held at each period's end; new: joined in the period; churned: subscribers who lost their paid membership or left in it.</p>
      </section>
      <section className="studio-card" aria-labelledby="posts-h">
        <h2 id="posts-h">Top posts</h2>
        {a.topPosts.length === 0 ? <p className="empty">No reactions or comments in this range.</p> : (
          <div className="table-wrap">
            <table className="studio-table top-posts">
              <thead><tr><th>Post</th><th>Reactions</th><th>Comments</th></tr></thead>
              <tbody>
                {a.topPosts.map((p) => (
                  <tr key={p.id}><td><a href={appBase(props.app!) + "/posts/" + p.id}>{p.excerpt || "(media)"}</a> <span className="meta">@{p.author}</span></td><td>{p.reactions}</td><td>{p.comments}</td></tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section className="studio-card" aria-labelledby="orders-h">
        <h2 id="orders-h">Orders by status</h2>
        <HBars title="Orders by status" rows={a.ordersByStatus.map((s) => ({ label: statusLabels[s.status] ?? s.status, value: s.count }))} />
        <div className="table-wrap">
          <table className="studio-table orders-by-status">
            <thead><tr><th>Status</th><th>Orders</th></tr></thead>
            <tbody>{a.ordersByStatus.map((s) => <tr key={s.status}><td>{statusLabels[s.status] ?? s.status}</td><td>{s.count}</td></tr>)}</tbody>
          </table>
        </div>
      </section>
      <section className="studio-card" aria-labelledby="att-h">
        <h2 id="att-h">Event attendance</h2>
        {a.attendance.length === 0 ? <p className="empty">No events in this range.</p> : (
          <>
            <HBars title="Attendance" rows={a.attendance.map((e) => ({ label: e.name.slice(0, 24), value: e.attendees }))} />
            <div className="table-wrap">
              <table className="studio-table attendance">
                <thead><tr><th>Event</th><th>Starts</th><th>Attendees</th></tr></thead>
                <tbody>{a.attendance.map((e) => <tr key={e.id}><td>{e.name}</td><td>{formatDate(e.startDate)}</td><td>{e.attendees}</td></tr>)}</tbody>
              </table>
            </div>
          </>
        )}
      </section>
    </>
  );
}

export function head(props: Props) {
  const app = props.app;
  return (
    <>
      <title>{"Studio · " + (app?.settings.basic.displayName || app?.name || "")}</title>
      <meta name="robots" content="noindex" />
    </>
  );
}

// PayPalSection: where the app's PayPal orders are paid (issue 24), and the
// platform fees owed for orders PayPal paid without taking the fee.
function PayPalSection({ props }: { props: Props }) {
  const d = props.data;
  const p = d.paypal!;
  const base = appBase(props.app!);
  return (
    <>
      <section className="studio-card" aria-labelledby="paypal-h">
        <h2 id="paypal-h">PayPal payouts</h2>
        {!p.enabled && <p className="meta">PayPal is not turned on for this site: the setting applies once the operator enables it.</p>}
        <p className="meta">
          Orders paid with PayPal go straight to this PayPal account. Give its merchant ID (PayPal shows it under Account settings) or its e-mail address.
          Leave both empty to be paid through the site instead.
        </p>
        {d.form === "paypal" && d.error && <p className="form-error" role="alert">{d.error}</p>}
        {!p.canManage && <p className="hint">Only the app's creator can change where PayPal orders are paid.</p>}
        {p.canManage && (
        <form method="post" action={base + "/studio/paypal"} className="studio-form">
          <label className={cls(d, "merchantId")}>
            PayPal merchant ID
            <input name="merchantId" defaultValue={p.merchantId} maxLength={13} autoComplete="off" spellCheck={false} />
            <FieldError d={d} name="merchantId" />
          </label>
          <label className={cls(d, "email")}>
            PayPal e-mail
            <input name="email" type="email" defaultValue={p.email} maxLength={254} autoComplete="email" />
            <FieldError d={d} name="email" />
          </label>
          <PayoutPassword d={d} />
          <button type="submit" className="button">Save</button>
        </form>
        )}
      </section>
      <section className="studio-card" aria-labelledby="fees-h">
        <h2 id="fees-h">Platform fees</h2>
        {p.feePercent > 0 ? (
          <p className="meta">
            {"The platform fee is " + p.feePercent + "% of each order. " +
              (p.feesAllowed ? "PayPal takes it from each payment." : "PayPal cannot take it at payment, so it is owed and listed here.")}
          </p>
        ) : (
          <p className="meta">This site charges no platform fee.</p>
        )}
        <p className="fees-owed">{"Owed: " + formatMoney(p.owedTotal, "USD")}</p>
        {p.owed.length > 0 && (
          <ul className="owed-list">
            {p.owed.map((f) => (
              <li key={f.id}>
                <span>{formatDate(f.createdAt)}</span>
                {" · " + formatMoney(f.amount, f.currency) + " of " + formatMoney(f.gross, f.currency)}
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}

const payoutStates: Record<string, [string, string]> = {
  NOT_CONNECTED: ["Not connected", "Connect a Stripe account so card payments reach you directly."],
  ONBOARDING: ["Setup not finished", "Stripe still needs some details before it can take payments for you."],
  PENDING: ["Being checked", "Your details are with Stripe; card payments start once it enables charges."],
  RESTRICTED: ["Restricted", "Stripe has paused payments for this account. Open the Stripe dashboard to see why."],
  ACTIVE: ["Active", "Card payments go to your Stripe account, less the platform fee."],
};

// PayoutsSection: the app's Stripe Connect account and the creator's
// statement (issue 24). Every action is a form or a link.
function PayoutsSection({ props }: { props: Props }) {
  const p = props.data.payouts!;
  const base = appBase(props.app!) + "/studio/payouts";
  const [label, help] = payoutStates[p.state] || [p.state, ""];
  const st = p.statement;
  return (
    <>
      <section className="studio-card" aria-labelledby="payouts-h">
        <h2 id="payouts-h">Payouts</h2>
        {!p.cardConfigured && <p className="hint">Card payments are not configured on this platform; wallet payments still count below.</p>}
        {p.cardConfigured && (
          <>
            <p>
              Stripe account: <strong className={"payout-state state-" + p.state.toLowerCase()} data-state={p.state}>{label}</strong>
              {p.accountId && <span className="hint"> ({p.accountId})</span>}
            </p>
            <p className="hint">{help}</p>
            {p.state !== "NOT_CONNECTED" && (
              <ul className="payout-flags">
                <li>Charges: {p.chargesEnabled ? "enabled" : "not yet"}</li>
                <li>Payouts to your bank: {p.payoutsEnabled ? "enabled" : "not yet"}</li>
                <li>Details submitted: {p.detailsSubmitted ? "yes" : "no"}</li>
              </ul>
            )}
            {p.currentlyDue.length > 0 && (
              <div className="payout-due">
                <p>Stripe needs:</p>
                <ul>
                  {p.currentlyDue.map((r) => (
                    <li key={r}>{r.replace(/[._]/g, " ")}</li>
                  ))}
                </ul>
              </div>
            )}
            {p.payoutsRequired && p.state !== "ACTIVE" && <p className="hint">Fans can pay this app by card once the account is active.</p>}
            {p.canManage && (
              <div className="payout-actions">
                {p.state !== "ACTIVE" && (
                  <form method="post" action={base + "/connect"}>
                    <PayoutPassword d={props.data} />
                    <button type="submit" className="button">{p.state === "NOT_CONNECTED" ? "Connect with Stripe" : "Continue Stripe setup"}</button>
                  </form>
                )}
                {p.detailsSubmitted && (
                  <form method="post" action={base + "/dashboard"}>
                    <PayoutPassword d={props.data} />
                    <button type="submit" className="button button-secondary">Stripe dashboard</button>
                  </form>
                )}
              </div>
            )}
            {!p.canManage && <p className="hint">Only the app's creator can connect or change the Stripe account.</p>}
          </>
        )}
        <p className="hint">Platform fee: {p.feePercent}% of each payment.</p>
      </section>
      <section className="studio-card" aria-labelledby="balance-h">
        <h2 id="balance-h">Balance</h2>
        <p className="big-number" data-testid="payout-balance">{formatMoney(st.balance, st.currency)}</p>
        <p className="hint">What this app earned, net of platform fees and refunds.</p>
      </section>
      <section className="studio-card" aria-labelledby="statement-h">
        <h2 id="statement-h">Statement by month</h2>
        <p className="exports">
          <a href={base + "/statement.csv"}>Export CSV</a>
        </p>
        {st.months.length === 0 ? (
          <p className="hint">Nothing yet: payments appear here as they arrive.</p>
        ) : (
          <div className="table-wrap">
            <table className="studio-table statement">
              <thead>
                <tr>
                  <th scope="col">Month</th>
                  <th scope="col">Payments</th>
                  <th scope="col">Gross</th>
                  <th scope="col">Platform fees</th>
                  <th scope="col">Processor fees</th>
                  <th scope="col">Refunds</th>
                  <th scope="col">Fees back</th>
                  <th scope="col">Net</th>
                </tr>
              </thead>
              <tbody>
                {[...st.months.map((m) => [m.month, m] as const), ["Total", st.totals] as const].map(([name, m]) => (
                  <tr key={name}>
                    <th scope="row">{name}</th>
                    <td>{m.payments}</td>
                    <td>{formatMoney(m.gross, st.currency)}</td>
                    <td>{formatMoney(-m.fees, st.currency)}</td>
                    <td>{formatMoney(-m.processorFees, st.currency)}</td>
                    <td>{formatMoney(-m.refunds, st.currency)}</td>
                    <td>{formatMoney(m.feesRefunded, st.currency)}</td>
                    <td>{formatMoney(m.net, st.currency)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
