import { formatMoney } from "../lib/format";
import { Img } from "../lib/img";
import { optionsLabel } from "../lib/orders";
import type { OrderItemView } from "../lib/types";

// OrderLines lists what an order holds, with a paid DIGITAL item's downloads.
export function OrderLines({ items }: { items: OrderItemView[] }) {
  return (
    <ul className="order-lines">
      {items.map((it) => {
        const img = it.storeItem.media.find((m) => m.type === "IMAGE");
        const opts = optionsLabel(it.customOptions ?? {});
        return (
          <li key={it.id} className="order-line">
            {img ? <Img media={img} alt="" sizes="56px" box={[56, 56]} /> : <span className="item-placeholder tiny" />}
            <div className="order-line-body">
              <span className="order-line-name">{it.storeItem.name}</span>
              {opts && <p className="meta">{opts}</p>}
              <p className="meta">{"Qty " + it.quantity + " × " + formatMoney(it.price, it.currency)}</p>
              {it.downloads && it.downloads.length > 0 && (
                <p className="downloads">
                  {it.downloads.map((m) => (
                    <a key={m.id} href={m.signedUrl} download>{"Download " + (m.name || it.storeItem.name)}</a>
                  ))}
                </p>
              )}
            </div>
            <span className="line-total">{formatMoney(it.price * it.quantity, it.currency)}</span>
          </li>
        );
      })}
    </ul>
  );
}
