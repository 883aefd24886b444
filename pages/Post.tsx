import { Layout } from "./components/Layout";
import { FULL_WIDTH, Img } from "./lib/img";
import { appSeo, SeoHead } from "./lib/seo";
import { truncate } from "./lib/format";
import { Ago } from "./lib/Ago";
import type { MessageView, PageProps } from "./lib/types";
import { unlockOf, type Pagination } from "./lib/community";
import { Island } from "./lib/Island";
import BackButton from "../islands/BackButton";
import LikeButton from "../islands/LikeButton";
import Comments from "../islands/Comments";
import { appBase } from "./lib/links";

type Data = { post: MessageView | null; replies: MessageView[]; pagination: Pagination; commentsError?: string; canPublish?: boolean; schedule?: string };
type Props = PageProps<Data>;


export default function Post(props: Props) {
  const app = props.app!;
  const community = appBase(app) + "/community";
  const post = props.data.post;
  if (!post) {
    return (
      <Layout props={props}>
        <div className="state state-error" role="alert">
          <h1>{props.error === "Post not found" ? "Post not found" : props.error}</h1>
          <Island name="BackButton" component={BackButton} props={{ fallback: community, label: "Go Back" }} />
        </div>
      </Layout>
    );
  }
  const signIn = props.authUrl + "/authenticate/signin?app=" + encodeURIComponent(app.name);
  const firstImage = post.attachments.findIndex((a) => a.media.type === "IMAGE");
  const report = appBase(app) + "/report";
  return (
    <Layout props={props}>
      <div className="post-page">
        <Island name="BackButton" component={BackButton} props={{ fallback: community }} />
        <article className="post-detail">
          {/* The page's heading for screen readers and outlines (a post has no title of its own). */}
          <h1 className="visually-hidden">{"Post by @" + post.sender.username}</h1>
          <header className="meta">
            <strong>@{post.sender.username}</strong>
          {post.sender.donorTier && <span className="badge tier-badge">{post.sender.donorTier}</span>} · <Ago iso={post.createdAt} now={props.now} />
            {post.isFeatured && <span className="badge">Featured</span>}
          </header>
          {post.hidden && (
            <p className="hidden-mark" role="status" data-testid="hidden-mark">
              {post.hidden === "PENDING"
                ? "Waiting for approval: only you and the moderators can see this post."
                : post.hidden === "DRAFT"
                  ? "Draft: only you and the app's staff can see this post."
                  : post.hidden === "SCHEDULED"
                    ? "Scheduled for " + (props.data.schedule ?? "later") + (post.newsletter ? ", and mailed to members" : "") + ": only you and the app's staff can see it until then."
                    : "Hidden while moderators review it: only you and the moderators can see this post."}
            </p>
          )}
          {props.data.canPublish && (
            <form method="post" action={appBase(app) + "/posts/" + post.id + "/publish"} className="publish-now">
              <button className="button" type="submit" data-testid="publish-now">
                Publish now
              </button>
            </form>
          )}
          {post.attachments.map((a, i) =>
            a.media.type === "VIDEO" ? (
              <video key={a.id} className="post-media" src={a.media.signedUrl} controls playsInline preload="metadata" />
            ) : (
              <Img
                key={a.id}
                className="post-media"
                media={a.media}
                alt={a.media.description || ""}
                sizes={FULL_WIDTH}
                fallback={[800, 800]}
                priority={i === firstImage}
              />
            ),
          )}
          {post.content && <p className="post-body">{post.content}</p>}
          {post.locked && (
            <div className="locked-post" data-testid="locked-post">
              {Array.from({ length: post.lockedMedia ?? 0 }).map((_, i) => (
                <div key={i} className="media-placeholder" aria-hidden="true" />
              ))}
              <p>
                <a className="button" href={unlockOf(post, appBase(app)).href}>
                  {unlockOf(post, appBase(app)).action}
                </a>
              </p>
            </div>
          )}
          {post.tags.length > 0 && (
            <ul className="tags">
              {post.tags.map((t) => (
                <li key={t.id}>#{t.name}</li>
              ))}
            </ul>
          )}
          <Island
            name="LikeButton"
            component={LikeButton}
            props={{ messageId: post.id, reactions: post.reactions, viewerId: props.viewer.user?.id ?? null, signInUrl: signIn, appName: app.name }}
          />
          <p className="report-links">
            <a className="report-link" href={report + "?type=POST&id=" + post.id} data-testid="report-post">
              Report post
            </a>
            <a className="report-link" href={report + "?type=MEMBER&id=" + post.senderId}>
              {"Report @" + post.sender.username}
            </a>
          </p>
        </article>
        {/* A locked post's replies are for its readers, and so is replying. */}
        {!post.locked && (
          <Island
            name="Comments"
            component={Comments}
            props={{
              postId: post.id,
              appName: app.name,
              replies: props.data.replies,
              loadError: props.data.commentsError ?? "",
              pagination: props.data.pagination,
              now: props.now,
              signedIn: props.viewer.user !== null,
              canComment: props.viewer.permissions.canComment,
              signInUrl: signIn,
              reportBase: report,
            }}
          />
        )}
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  const app = props.app!;
  const post = props.data.post;
  if (!post) return <title>Post not found</title>;
  const seo = appSeo(app, props, "/posts/" + post.id);
  const text = post.content.replace(/\s+/g, " ").trim();
  seo.title = (text ? truncate(text, 60) + " · " : "Post by @" + post.sender.username + " · ") + seo.title;
  seo.description = text ? truncate(text, 160) : seo.description;
  seo.type = "article";
  const image = post.attachments.find((a) => a.media.type === "IMAGE")?.media.signedUrl;
  if (image) seo.image = image;
  seo.jsonLd = {
    "@context": "https://schema.org",
    "@type": "SocialMediaPosting",
    url: seo.url,
    headline: seo.title,
    articleBody: post.content,
    datePublished: post.createdAt,
    author: { "@type": "Person", name: post.sender.username },
    ...(image ? { image } : {}),
  };
  return <SeoHead seo={seo} />;
}

export function status(props: Props) {
  return props.status ?? 200;
}
