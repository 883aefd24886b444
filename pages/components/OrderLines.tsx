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
              {it.downloads && it.downloads.some((d) => d.url) && (
                <div className="downloads">
                  <ul>
                    {it.downloads.filter((d) => d.url).map((d) => (
                      <li key={d.id}>
                        <a href={d.url} download={d.name}>{"Download " + d.name}</a> <span className="meta">{fileSize(d.size)}</span>
                      </li>
                    ))}
                  </ul>
                  <p className="meta">{"Downloaded " + it.downloads[0].count + (it.downloads[0].count === 1 ? " time" : " times") + " · links work for 15 minutes: reopen this page for fresh ones"}</p>
                </div>
              )}
            </div>
            <span className="line-total">{formatMoney(it.price * it.quantity, it.currency)}</span>
          </li>
        );
      })}
    </ul>
  );
}

// fileSize words a byte count ("3.2 MB").
function fileSize(n: number): string {
  if (n < 1024) return n + " B";
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + " KB";
  if (n < 1024 * 1024 * 1024) return (n / (1024 * 1024)).toFixed(1) + " MB";
  return (n / (1024 * 1024 * 1024)).toFixed(2) + " GB";
}
