import { Layout } from "./components/Layout";
import { displayTitle } from "./components/Header";
import { SearchGroups } from "../islands/lib/notifications";
import type { SearchResults } from "./lib/notifications";
import type { PageProps } from "./lib/types";
import { appBase } from "./lib/links";

type Props = PageProps<SearchResults>;

// Search: the header overlay's results as a page; the form is a plain GET.
export default function Search(props: Props) {
  const app = props.app!;
  const res = props.data;
  const total = res.posts.length + res.items.length + res.events.length;
  return (
    <Layout props={props}>
      <div className="search-page">
        <h1 className="page-title">Search</h1>
        <form method="get" action={appBase(app) + "/search"} className="search-form">
          <input type="search" name="q" defaultValue={res.query} placeholder={"Search " + displayTitle(app)} aria-label="Search" />
          <button type="submit" className="button">
            Search
          </button>
        </form>
        {res.query !== "" && total === 0 && <p className="empty">{"Nothing found for “" + res.query + "”"}</p>}
        <SearchGroups res={res} />
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  return (
    <>
      <title>{"Search · " + (props.app ? displayTitle(props.app) : "Marquee")}</title>
      <meta name="robots" content="noindex" />
    </>
  );
}
