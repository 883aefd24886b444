import type { AppView, PageProps } from "./types";
import { displayTitle } from "../components/Header";
import { appBaseUrl } from "./links";

// jsonForScript makes JSON safe inside <script>: "<" can never close the tag.
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

export interface SeoInput {
  title: string;
  description: string;
  url: string;
  image?: string;
  keywords?: string;
  type?: string;
  jsonLd?: unknown;
  noindex?: boolean;
  // feed: the app's Atom feed of posts, announced to readers.
  feed?: string;
}

// SeoHead renders the head tags search engines and link previews read.
export function SeoHead({ seo }: { seo: SeoInput }) {
  return (
    <>
      <title>{seo.title}</title>
      <meta name="description" content={seo.description} />
      {seo.keywords && <meta name="keywords" content={seo.keywords} />}
      {seo.noindex && <meta name="robots" content="noindex" />}
      <link rel="canonical" href={seo.url} />
      {seo.feed && <link rel="alternate" type="application/atom+xml" title={seo.title} href={seo.feed} />}
      <meta property="og:type" content={seo.type ?? "website"} />
      <meta property="og:title" content={seo.title} />
      <meta property="og:description" content={seo.description} />
      <meta property="og:url" content={seo.url} />
      {seo.image && <meta property="og:image" content={seo.image} />}
      <meta name="twitter:card" content={seo.image ? "summary_large_image" : "summary"} />
      <meta name="twitter:title" content={seo.title} />
      <meta name="twitter:description" content={seo.description} />
      {seo.image && <meta name="twitter:image" content={seo.image} />}
      {seo.jsonLd !== undefined && (
        <script type="application/ld+json" dangerouslySetInnerHTML={{ __html: jsonForScript(seo.jsonLd) }} />
      )}
    </>
  );
}

// appSeo is the SEO of an app page; pages override title and description.
export function appSeo(app: AppView, props: PageProps<any>, path = ""): SeoInput {
  const name = displayTitle(app);
  return {
    title: name,
    description: app.settings.basic.metaDescription || app.description || name,
    keywords: app.settings.basic.keywords,
    url: appBaseUrl(app, props.publicUrl) + path,
    // Without a banner, the app's icon (or monogram) on its colour.
    image: app.banner?.signedUrl || appBaseUrl(app, props.publicUrl) + "/icons/og.png",
  };
}

// listSeo is the SEO of a list page: "Events · Demo Studio" for the first
// page; page 2 and later are pages of their own for search engines, with
// their own canonical URL (?page=N, filters dropped) and a title saying
// which page ("Events · Page 2 · Demo Studio").
export function listSeo(app: AppView, props: PageProps<any>, path: string, label: string, page?: number): SeoInput {
  const seo = appSeo(app, props, path);
  const n = page && page > 1 ? Math.floor(page) : 1;
  seo.title = label + (n > 1 ? " · Page " + n : "") + " · " + seo.title;
  if (n > 1) seo.url += "?page=" + n;
  return seo;
}
