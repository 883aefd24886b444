import type { ComponentType } from "react";
import { Layout } from "./components/Layout";
import { appSeo, SeoHead } from "./lib/seo";
import type { CreateData, PageProps, Permissions } from "./lib/types";
import { Island } from "./lib/Island";
import CreatePostForm, { type CreateFormProps } from "../islands/CreatePostForm";
import CreateStoryForm from "../islands/CreateStoryForm";
import type { PageModule } from "./registry";
import { appBase } from "./lib/links";

type Props = PageProps<CreateData>;

interface Kind {
  title: string;
  path: string;
  island: string;
  form: ComponentType<CreateFormProps>;
  allowed: (p: Permissions) => boolean;
}

// createPage builds the New Post and Add to Story screens, which differ only
// in their form island and the permission they need. The footer is hidden on
// both paths; back leads to the feed.
function createPage(kind: Kind): PageModule {
  function CreateContent(props: Props) {
    const app = props.app!;
    const community = appBase(app) + "/community";
    const perms = props.viewer.permissions;
    return (
      <Layout props={props}>
        <div className="create-page">
          <div className="create-head">
            <a className="back-button" href={community} aria-label="Back to community">
              ← Back
            </a>
            <h1>{kind.title}</h1>
          </div>
          {props.viewer.user === null ? (
            <p className="state">
              <a className="button" href={props.authUrl + "/authenticate/signin?app=" + encodeURIComponent(app.name)}>
                Sign In
              </a>
            </p>
          ) : (
            <Island
              name={kind.island}
              component={kind.form}
              props={{
                appId: app.id,
                communityId: props.data.communityId,
                allowed: kind.allowed(perms) && props.data.communityId !== "",
                canFeature: perms.canFeature,
                communityHref: community,
                action: appBase(app) + kind.path,
                error: props.data.error,
                content: props.data.content,
                canSchedule: props.data.canSchedule,
                canNewsletter: props.data.canNewsletter,
                timeZone: props.data.timeZone,
                when: props.data.when,
                publishAt: props.data.publishAt,
                newsletter: props.data.newsletter,
                accessOptions: props.data.accessOptions,
                access: props.data.access,
              }}
            />
          )}
        </div>
      </Layout>
    );
  }
  function head(props: Props) {
    const seo = appSeo(props.app!, props, kind.path);
    seo.title = kind.title + " · " + seo.title;
    seo.noindex = true;
    return <SeoHead seo={seo} />;
  }
  return { component: CreateContent, head };
}

export const CreatePost = createPage({
  title: "New Post",
  path: "/create-post",
  island: "CreatePostForm",
  form: CreatePostForm,
  allowed: (p) => p.canPost,
});

export const CreateStory = createPage({
  title: "Add to Story",
  path: "/create-story",
  island: "CreateStoryForm",
  form: CreateStoryForm,
  allowed: (p) => p.canCreateStories,
});
