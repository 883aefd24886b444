import { ErrorState } from "./components/ErrorState";
import { Layout } from "./components/Layout";
import { listSeo, SeoHead } from "./lib/seo";
import { displayTitle } from "./components/Header";
import type { MessageView, PageProps } from "./lib/types";
import type { Pagination, StoryGroup } from "./lib/community";
import { Island } from "./lib/Island";
import Feed, { FeedList } from "../islands/Feed";
import StoriesViewer from "../islands/StoriesViewer";
import { appBase, appBaseUrl } from "./lib/links";

type Data = { communityId: string; posts: MessageView[]; pagination: Pagination; stories: StoryGroup[]; disabled: boolean; openStory?: string; storiesError?: string };
type Props = PageProps<Data>;

// Community is the feed: stories strip, then posts (page 1 rendered here,
// later pages appended by the Feed island).
export default function Community(props: Props) {
  const app = props.app!;
  const base = appBase(app);
  const d = props.data;
  if (d.disabled) {
    const b = app.settings.basic;
    return (
      <Layout props={props}>
        <div className="state community-off">
          <h1>{b.displayName || displayTitle(app)}</h1>
          {b.metaDescription && <p>{b.metaDescription}</p>}
          {b.keywords && <p className="meta">{b.keywords}</p>}
          <p>This app doesn't have community features enabled.</p>
        </div>
      </Layout>
    );
  }
  const perms = props.viewer.permissions;
  return (
    <Layout props={props}>
      <h1 className="visually-hidden">{app.settings.features.community.name || "Community"}</h1>
      <Island
        name="StoriesViewer"
        component={StoriesViewer}
        props={{ groups: d.stories, canCreate: perms.canCreateStories, createHref: base + "/create-story", reportBase: base + "/report", openUser: d.openStory,
          loadError: d.storiesError, communityId: d.communityId, retryHref: props.path }}
        when="idle"
      />
      {props.error ? (
        <ErrorState message={props.error} retryHref={props.path} />
      ) : (
        <>
          <FeedList posts={d.posts} base={base} now={props.now} />
          {d.pagination.hasNext && (
            <Island
              name="Feed"
              component={Feed}
              props={{ communityId: d.communityId, shownIds: d.posts.map((p) => p.id), pagination: d.pagination, base, now: props.now }}
              when="visible"
            />
          )}
        </>
      )}
    </Layout>
  );
}

export function head(props: Props) {
  const app = props.app!;
  const seo = listSeo(app, props, "/community", app.settings.features.community.name || "Community", props.data?.pagination?.page);
  if (!props.data?.disabled) seo.feed = appBaseUrl(app, props.publicUrl) + "/feed.xml";
  return <SeoHead seo={seo} />;
}
