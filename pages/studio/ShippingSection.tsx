import { formatMoney } from "../lib/format";
import type { PageProps, StudioData } from "../lib/types";
import { FieldError, cls } from "./fields";
import { appBase } from "../lib/links";

type ZoneForm = { id: string; name: string; countries: string[]; flatRate: string; perItem: string; freeOver: string };

const dollars = (c: number) => (c % 100 === 0 ? String(c / 100) : (c / 100).toFixed(2));

// ShippingSection is the studio's shipping screen (issue 43 item 4): the
// app's zones, each with its countries and rates, a form per zone and one
// for a new zone; plain forms, so it works without JavaScript.
export function ShippingSection({ props }: { props: PageProps<StudioData> }) {
  const d = props.data;
  const sh = d.shipping!;
  const base = appBase(props.app!) + "/studio/shipping";
  const edit = sh.edit;
  const formOf = (id: string, fallback: ZoneForm): ZoneForm => (edit && edit.id === id ? { ...edit, countries: edit.countries ?? [] } : fallback);
  const names = new Map(sh.countries.map((c) => [c.code, c.name]));
  return (
    <>
      <section className="studio-card" aria-labelledby="shipping-h">
        <h2 id="shipping-h">Shipping</h2>
        <p className="meta">
          {sh.zones.length === 0
            ? "No zones yet: shipping is free and buyers may choose any country. Once you add a zone, checkout offers only the countries of your zones and charges their rates."
            : "Checkout offers only the countries below and charges the rate of the buyer's zone for physical items."}
        </p>
        {sh.zones.length > 0 && (
          <ul className="zone-list">
            {sh.zones.map((z) => (
              <li key={z.id} className="zone-summary">
                <strong>{z.name}</strong>
                {": " + formatMoney(z.flatRate, "USD") + " per order" + (z.perItem > 0 ? ", " + formatMoney(z.perItem, "USD") + " per extra item" : "") +
                  (z.freeOver > 0 ? ", free over " + formatMoney(z.freeOver, "USD") : "")}
                <p className="meta">{z.countries.map((c) => names.get(c) ?? c).join(", ")}</p>
              </li>
            ))}
          </ul>
        )}
      </section>
      {sh.zones.map((z) => (
        <ZoneCard key={z.id} d={d} action={base + "/" + z.id} title={"Zone: " + z.name} countries={sh.countries}
          form={formOf(z.id, { id: z.id, name: z.name, countries: z.countries, flatRate: dollars(z.flatRate), perItem: dollars(z.perItem), freeOver: z.freeOver > 0 ? dollars(z.freeOver) : "" })}
          deleteAction={base + "/" + z.id + "/delete"} />
      ))}
      <ZoneCard d={d} action={base} title="New zone" countries={sh.countries}
        form={formOf("", { id: "", name: "", countries: [], flatRate: "", perItem: "", freeOver: "" })} />
    </>
  );
}

function ZoneCard({ d, action, title, countries, form, deleteAction }: {
  d: StudioData; action: string; title: string; countries: { code: string; name: string }[]; form: ZoneForm; deleteAction?: string;
}) {
  const mine = d.form === "zone" && d.shipping?.edit?.id === form.id;
  const fd: StudioData = mine ? d : { ...d, fields: {} };
  const key = form.id || "new";
  return (
    <section className="studio-card zone-card" aria-labelledby={"zone-h-" + key}>
      <h2 id={"zone-h-" + key}>{title}</h2>
      {mine && d.error && <p className="form-error" role="alert">{d.error}</p>}
      <form method="post" action={action} className="studio-form zone-form">
        <label className={cls(fd, "name")}>
          Zone name
          <input name="name" required maxLength={80} defaultValue={form.name} placeholder="Domestic" />
          <FieldError d={fd} name="name" />
        </label>
        <label className={cls(fd, "countries")}>
          Countries
          <select name="countries" multiple size={8} defaultValue={form.countries} className="country-select">
            {countries.map((c) => (
              <option key={c.code} value={c.code}>{c.name}</option>
            ))}
          </select>
          <span className="hint">Hold Ctrl (⌘ on a Mac) to choose several. A country belongs to one zone.</span>
          <FieldError d={fd} name="countries" />
        </label>
        <div className="field-row">
          <label className={cls(fd, "flatRate")}>
            Per order ($)
            <input name="flatRate" inputMode="decimal" defaultValue={form.flatRate} placeholder="0" />
            <FieldError d={fd} name="flatRate" />
          </label>
          <label className={cls(fd, "perItem")}>
            Each extra item ($)
            <input name="perItem" inputMode="decimal" defaultValue={form.perItem} placeholder="0" />
            <FieldError d={fd} name="perItem" />
          </label>
          <label className={cls(fd, "freeOver")}>
            Free over ($)
            <input name="freeOver" inputMode="decimal" defaultValue={form.freeOver} placeholder="never" />
            <FieldError d={fd} name="freeOver" />
          </label>
        </div>
        <button type="submit" className="button">{form.id ? "Save zone" : "Add zone"}</button>
      </form>
      {deleteAction && (
        <form method="post" action={deleteAction} className="cancel-form">
          <button type="submit" className="link-button">Delete zone</button>
        </form>
      )}
    </section>
  );
}
