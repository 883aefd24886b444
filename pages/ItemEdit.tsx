import { Layout } from "./components/Layout";
import { appSeo, SeoHead } from "./lib/seo";
import type { ItemEditData, PageProps } from "./lib/types";
import { Island } from "../islands/Island";
import ItemForm from "../islands/ItemForm";

type Props = PageProps<ItemEditData>;

// ItemEdit is the New/Edit Item screen (creators and admins; the server
// refuses anyone else before this renders).
export default function ItemEdit(props: Props) {
  const app = props.app!;
  const d = props.data;
  const base = "/apps/" + app.name;
  return (
    <Layout props={props} hideFooter>
      <a className="back-button" href={d.item ? base + "/store/items/" + d.item.id : base + "/store"}>← Back</a>
      <h1 className="page-title">{d.item ? "Edit Item" : "New Item"}</h1>
      <Island name="ItemForm" component={ItemForm} props={{ appId: app.id, appName: app.name, storeId: d.storeId, item: d.item, types: d.types, events: d.events ?? [], error: d.error }} />
    </Layout>
  );
}

export function head(props: Props) {
  const seo = appSeo(props.app!, props, "/store");
  seo.title = (props.data.item ? "Edit Item" : "New Item") + " · " + seo.title;
  seo.noindex = true;
  return <SeoHead seo={seo} />;
}
