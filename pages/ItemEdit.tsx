import { Layout } from "./components/Layout";
import { appSeo, SeoHead } from "./lib/seo";
import type { ItemEditData, PageProps } from "./lib/types";
import { Island } from "./lib/Island";
import ItemForm from "../islands/ItemForm";
import ItemFilesUpload from "../islands/ItemFilesUpload";
import { appBase } from "./lib/links";

type Props = PageProps<ItemEditData>;

// ItemEdit is the New/Edit Item screen (creators and admins; the server
// refuses anyone else before this renders).
export default function ItemEdit(props: Props) {
  const app = props.app!;
  const d = props.data;
  const base = appBase(app);
  return (
    <Layout props={props} hideFooter>
      <a className="back-button" href={d.item ? base + "/store/items/" + d.item.id : base + "/store"}>← Back</a>
      <h1 className="page-title">{d.item ? "Edit Item" : "New Item"}</h1>
      <Island name="ItemForm" component={ItemForm} props={{ appId: app.id, appName: app.name, storeId: d.storeId, item: d.item, types: d.types, events: d.events ?? [], error: d.error, draft: d.draft ?? undefined }} />
      {d.item && d.item.type === "DIGITAL" && (
        // The files buyers download: private, never shown as item images.
        <section className="item-files item-form" aria-label="Files buyers download">
          <h2>Files buyers download</h2>
          {d.filesNotice && <p className="added-alert" role="status">{d.filesNotice}</p>}
          {d.filesError && <p className="inline-error" role="alert">{d.filesError}</p>}
          {d.files.length === 0 ? (
            <p className="meta">No files yet: buyers get nothing to download until you add one.</p>
          ) : (
            <ul className="file-list">
              {d.files.map((f) => (
                <li key={f.id}>{f.name + " · " + f.mimeType + " · " + f.size + " bytes"}</li>
              ))}
            </ul>
          )}
          <Island name="ItemFilesUpload" component={ItemFilesUpload} props={{ appName: app.name, itemId: d.item.id, fileTypes: d.fileTypes }} />
        </section>
      )}
    </Layout>
  );
}

export function head(props: Props) {
  const seo = appSeo(props.app!, props, "/store");
  seo.title = (props.data.item ? "Edit Item" : "New Item") + " · " + seo.title;
  seo.noindex = true;
  return <SeoHead seo={seo} />;
}
