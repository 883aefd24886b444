import { useState } from "react";
import { Img } from "../pages/lib/img";
import type { EventOption, ItemDraft, ItemView, MediaView } from "../pages/lib/types";
import { formatDate } from "../pages/lib/format";
import { api } from "./lib/api";
import { useHydrated } from "./lib/hydrated";
import { checkFile, uploadFile } from "./lib/upload";
import { appPath } from "./lib/links";

interface Props {
  appId: string;
  appName: string;
  storeId: string;
  item: ItemView | null;
  types: string[];
  events: EventOption[];
  // Why the form without JavaScript was refused, and what it held.
  error?: string;
  draft?: ItemDraft;
}

interface VariantRow {
  id: string;
  name: string;
  value: string;
  adjust: string; // dollars as typed
  stock: string; // "" = untracked
}

const BLANK_ROWS: VariantRow[] = [
  { id: "", name: "", value: "", adjust: "", stock: "" },
  { id: "", name: "", value: "", adjust: "", stock: "" },
];

const dollars = (cents: number | null | undefined) => (cents == null ? "" : (cents / 100).toFixed(2));
// cents turns a typed dollar amount into cents; NaN when it is not one.
const cents = (s: string) => (s.trim() === "" ? NaN : Math.round(Number(s) * 100));

// ItemForm is the New/Edit Item screen for creators and admins. It sends the
// whole item to POST /api/store/:storeId/items or PUT /api/store/items/:id;
// the server validates and its message is shown as it is.
export default function ItemForm(props: Props) {
  const it = props.item;
  const dr = props.draft;
  const hydrated = useHydrated();
  const [name, setName] = useState(dr ? dr.name : it?.name ?? "");
  const [description, setDescription] = useState(dr ? dr.description : it?.description ?? "");
  const [type, setType] = useState<string>(dr?.type || it?.type || "PHYSICAL");
  const [price, setPrice] = useState(dr ? dr.price : dollars(it?.price));
  const [compare, setCompare] = useState(dr ? dr.comparePrice : dollars(it?.comparePrice));
  // Only physical goods run out: a new item of another type starts
  // untracked (a blank stock is untracked too, with JavaScript or without).
  const [tracked, setTracked] = useState(dr ? dr.tracked : it ? it.stock !== null : true);
  const [trackTouched, setTrackTouched] = useState(!!(dr || it));
  const [stock, setStock] = useState(dr ? dr.stock : it?.stock != null ? String(it.stock) : "");
  const [sku, setSku] = useState(dr ? dr.sku : it?.sku ?? "");
  const [eventId, setEventId] = useState(dr ? dr.eventId : it?.eventId ?? "");
  const [featured, setFeatured] = useState(dr ? dr.isFeatured : it?.isFeatured ?? false);
  const [tags, setTags] = useState(dr ? dr.tags : (it?.tags ?? []).map((t) => t.name).join(", "));
  const [media, setMedia] = useState<MediaView[]>(dr ? dr.media : it?.media ?? []);
  const [variants, setVariants] = useState<VariantRow[]>(
    dr
      ? dr.variants.map((v) => ({ ...v }))
      : (it?.variants ?? []).map((v) => ({ id: v.id, name: v.name, value: v.value, adjust: dollars(v.priceAdjustment), stock: v.stock == null ? "" : String(v.stock) })),
  );
  const [busy, setBusy] = useState(false);
  const [uploading, setUploading] = useState(false);
  const [error, setError] = useState(props.error ?? "");
  const base = appPath(props.appName);

  async function onFiles(files: FileList | null) {
    if (!files) return;
    setUploading(true);
    setError("");
    try {
      for (const file of Array.from(files)) {
        const bad = checkFile(file, "store-item");
        if (bad) throw new Error(bad);
        const m = await uploadFile(file, { appId: props.appId, mediaKey: "store-item" });
        setMedia((prev) => [...prev, m]);
      }
    } catch (err) {
      setError((err as Error).message || "Upload failed");
    } finally {
      setUploading(false);
    }
  }

  function setVariant(i: number, patch: Partial<VariantRow>) {
    setVariants(variants.map((v, j) => (j === i ? { ...v, ...patch } : v)));
  }

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    const p = cents(price);
    if (isNaN(p)) return setError("Please enter a price");
    const c = compare.trim() === "" ? null : cents(compare);
    if (c !== null && isNaN(c)) return setError("Compare price must be an amount");
    const body = {
      name, description, type: type as ItemView["type"], price: p, comparePrice: c, sku, isFeatured: featured,
      stock: tracked && stock.trim() !== "" ? Number(stock) : null,
      tags: tags.split(",").map((t) => t.trim()).filter(Boolean),
      mediaIds: media.map((m) => m.id),
      eventId: type === "EVENT_TICKET" ? eventId : "",
      variants: variants.map((v) => ({
        id: v.id || undefined, name: v.name, value: v.value,
        priceAdjustment: v.adjust.trim() === "" ? 0 : cents(v.adjust),
        stock: v.stock.trim() === "" ? null : Number(v.stock),
      })),
    };
    setBusy(true);
    setError("");
    try {
      const saved = it
        ? await api("PUT", "/api/store/items/{itemId}", { params: { itemId: it.id }, body })
        : await api("POST", "/api/store/{storeId}/items", { params: { storeId: props.storeId }, body });
      window.location.href = base + "/store/items/" + saved.id;
    } catch (err) {
      setError((err as Error).message || (it ? "Failed to update item" : "Failed to create item"));
      setBusy(false);
    }
  }

  async function remove() {
    if (!it || !window.confirm("Delete this item? Carts keep it flagged; orders keep their copy.")) return;
    setBusy(true);
    try {
      await api("DELETE", "/api/store/items/{itemId}", { params: { itemId: it.id } });
      window.location.href = base + "/store";
    } catch (err) {
      setError((err as Error).message || "Failed to delete item");
      setBusy(false);
    }
  }

  return (
    // Without JavaScript the form posts itself (multipart, with the chosen
    // images) to the page's address; hydrated it calls the JSON API.
    <form className="item-form" method="post" encType="multipart/form-data"
      action={base + (it ? "/store/items/" + it.id + "/edit" : "/store/items/new")} onSubmit={submit} data-hydrated={hydrated || undefined}>
      <label>Name <input name="name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} /></label>
      <label>Description <textarea name="description" rows={4} maxLength={5000} value={description} onChange={(e) => setDescription(e.target.value)} /></label>
      <label>Type
        <select name="type" value={type} onChange={(e) => {
          setType(e.target.value);
          if (!trackTouched) setTracked(e.target.value === "PHYSICAL");
        }}>
          {props.types.map((t) => <option key={t} value={t}>{t.replace("_", " ").toLowerCase()}</option>)}
        </select>
      </label>
      {type === "EVENT_TICKET" && (
        // Paying for the ticket makes the buyer an attendee of this event,
        // and the event page then sells the ticket instead of a free Join.
        <label>Event
          <select name="eventId" value={eventId} onChange={(e) => setEventId(e.target.value)}>
            <option value="">No event (not linked)</option>
            {props.events.map((ev) => (
              <option key={ev.id} value={ev.id}>{ev.name + " · " + formatDate(ev.startDate)}</option>
            ))}
          </select>
        </label>
      )}
      <div className="row">
        <label>Price ($) <input name="price" type="number" min="0" step="0.01" required value={price} onChange={(e) => setPrice(e.target.value)} /></label>
        <label>Compare price ($) <input name="comparePrice" type="number" min="0" step="0.01" value={compare} onChange={(e) => setCompare(e.target.value)} /></label>
      </div>
      <div className="row">
        <label className="check"><input type="checkbox" name="tracked" value="1" checked={tracked} onChange={(e) => { setTracked(e.target.checked); setTrackTouched(true); }} /> Track stock</label>
        {tracked && <label>Stock <input name="stock" type="number" min="0" step="1" placeholder="blank: unlimited" value={stock} onChange={(e) => setStock(e.target.value)} /></label>}
      </div>
      <label>SKU <input name="sku" maxLength={64} value={sku} onChange={(e) => setSku(e.target.value)} /></label>
      <label className="check"><input type="checkbox" name="isFeatured" value="1" checked={featured} onChange={(e) => setFeatured(e.target.checked)} /> Featured on the home page</label>
      <label>Tags (comma separated) <input name="tags" value={tags} onChange={(e) => setTags(e.target.value)} /></label>
      <fieldset>
        <legend>Images</legend>
        <ul className="media-list">
          {media.map((m) => (
            <li key={m.id}>
              <input type="hidden" name="mediaIds" value={m.id} />
              <Img media={m} alt="" sizes="64px" box={[64, 64]} />
              {hydrated && <button type="button" className="link-button" onClick={() => setMedia(media.filter((x) => x.id !== m.id))}>Remove</button>}
            </li>
          ))}
        </ul>
        <input type="file" name="images" accept="image/*" multiple aria-label="Add images" disabled={uploading} onChange={(e) => hydrated && onFiles(e.target.files)} />
        {uploading && <p className="meta">Uploading...</p>}
      </fieldset>
      <fieldset>
        <legend>Variants</legend>
        {/* Without JavaScript two blank rows stand in for Add Variant. */}
        {(hydrated ? variants : [...variants, ...BLANK_ROWS]).map((v, i) => (
          <div className="variant-row" key={i}>
            <input type="hidden" name="variantId" value={v.id} />
            <input name="variantName" aria-label="Variant name" placeholder="Name (e.g. Size)" value={v.name} onChange={(e) => setVariant(i, { name: e.target.value })} />
            <input name="variantValue" aria-label="Variant value" placeholder="Value (e.g. M)" value={v.value} onChange={(e) => setVariant(i, { value: e.target.value })} />
            <input name="variantAdjust" aria-label="Price adjustment ($)" placeholder="+ $" type="number" step="0.01" value={v.adjust} onChange={(e) => setVariant(i, { adjust: e.target.value })} />
            <input name="variantStock" aria-label="Variant stock" placeholder="Stock (blank: untracked)" type="number" min="0" value={v.stock} onChange={(e) => setVariant(i, { stock: e.target.value })} />
            {hydrated && <button type="button" className="link-button" onClick={() => setVariants(variants.filter((_, j) => j !== i))}>Remove</button>}
          </div>
        ))}
        {hydrated && (
          <button type="button" className="button button-secondary" onClick={() => setVariants([...variants, { id: "", name: variants[0]?.name ?? "", value: "", adjust: "", stock: "" }])}>Add Variant</button>
        )}
      </fieldset>
      {error && <p className="inline-error" role="alert">{error}</p>}
      <div className="form-actions">
        <button type="submit" className="button" disabled={hydrated && (busy || uploading)}>{busy ? "Saving..." : it ? "Save Changes" : "Create Item"}</button>
        {it && hydrated && <button type="button" className="button button-secondary" disabled={busy} onClick={remove}>Delete Item</button>}
      </div>
    </form>
  );
}
