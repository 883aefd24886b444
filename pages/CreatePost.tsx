import { Layout } from "./components/Layout";
import { appSeo, SeoHead } from "./lib/seo";
import type { PageProps } from "./lib/types";
import { Island } from "../islands/Island";
import CreatePostForm from "../islands/CreatePostForm";

type Props = PageProps<{ communityId: string }>;

// CreatePost: the footer is hidden on this path; back leads to the feed.
export default function CreatePost(props: Props) {
  const app = props.app!;
  const community = "/apps/" + app.name + "/community";
  const perms = props.viewer.permissions;
  const signedIn = props.viewer.user !== null;
  return (
    <Layout props={props}>
      <div className="create-page">
        <div className="create-head">
          <a className="back-button" href={community} aria-label="Back to community">
            ← Back
          </a>
          <h1>New Post</h1>
        </div>
        {!signedIn ? (
          <p className="state">
            <a className="button" href={props.authUrl + "/authenticate/signin?app=" + encodeURIComponent(app.name)}>
              Sign In
            </a>
          </p>
        ) : (
          <Island
            name="CreatePostForm"
            component={CreatePostForm}
            props={{
              appId: app.id,
              communityId: props.data.communityId,
              allowed: perms.canPost && props.data.communityId !== "",
              canFeature: perms.canFeature,
              communityHref: community,
            }}
          />
        )}
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  const seo = appSeo(props.app!, props, "/create-post");
  seo.title = "New Post · " + seo.title;
  seo.noindex = true;
  return <SeoHead seo={seo} />;
}
