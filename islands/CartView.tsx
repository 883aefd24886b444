import { useEffect, useState } from "react";
import { Img } from "../pages/lib/img";
import { formatMoney } from "../pages/lib/format";
import type { CartLine, CartView as Cart } from "../pages/lib/types";
import { api, ApiError, offline } from "./lib/api";
import { clearLocal, mergeLocal, readLocal, setLocalQuantity, type LocalLine } from "./lib/cart-store";
import { useHydrated } from "./lib/hydrated";
import { appPath } from "./lib/links";

interface Props {
  appName: string;
  storeId: string;
  cart: Cart | null;
  notice?: string;
}

const issueText: Record<string, string> = {
  DELETED: "No longer available",
  OUT_OF_STOCK: "Out of stock",
  INSUFFICIENT_STOCK: "Not enough in stock: lower the quantity",
  VARIANT_UNAVAILABLE: "This option is no longer available",
  VARIANT_REQUIRED: "No size chosen: remove this and add it again with one",
};

// CartView lists the cart with quantity buttons, Remove and Clear. Each
// button is a form post (works without JavaScript); hydrated, they call the
// API, and when it cannot be reached the change is kept on this device and
// merged into the server cart once it answers (SPEC.md section 4).
export default function CartView(props: Props) {
  const hydrated = useHydrated();
  const [cart, setCart] = useState<Cart | null>(props.cart);
  const [local, setLocal] = useState<LocalLine[]>([]);
  const [error, setError] = useState(props.notice ?? "");
  const [busy, setBusy] = useState(false);
  const base = appPath(props.appName);
  const storeId = props.storeId;

  // refresh merges changes kept on this device into the server cart and
  // reloads it. On the first run, when the server rendered no stored cart
  // (none, or the empty one without an id it shows when there is none) and
  // nothing was merged, it asks nothing: the server has just said there is
  // no cart, and asking again would get SPEC's 404, which the browser logs
  // as a console error.
  async function refresh(first = false) {
    const merged = await mergeLocal(props.storeId);
    if (merged.refused.length) setError(merged.refused.join("; "));
    if (first && !props.cart?.id && !merged.cart) {
      setLocal(readLocal(props.storeId)?.items ?? []);
      return;
    }
    try {
      setCart(await api("GET", "/api/store/{storeId}/cart", { params: { storeId } }));
    } catch (err) {
      // 404 is SPEC's "no cart yet": an empty cart, not an error.
      if (err instanceof ApiError && err.status === 404) setCart(null);
      else if (!offline(err)) setError((err as Error).message);
    }
    setLocal(readLocal(props.storeId)?.items ?? []);
  }
  useEffect(() => {
    refresh(true);
    const online = () => refresh();
    window.addEventListener("online", online);
    return () => window.removeEventListener("online", online);
  }, []);

  async function run(e: React.FormEvent, call: () => Promise<Cart | null>, fallback: () => void, failure: string) {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      const next = await call();
      setCart(next ?? (cart ? { ...cart, items: [], totals: { ...cart.totals, subtotal: 0, itemCount: 0 } } : null));
    } catch (err) {
      if (offline(err)) fallback();
      else setError((err as Error).message || failure);
    } finally {
      setBusy(false);
    }
  }

  // Offline, a change shows at once on this device (SPEC.md section 4).
  function changeLocally(line: CartLine, quantity: number) {
    if (!cart) return;
    const items = cart.items
      .map((l) => (l.id === line.id ? { ...l, quantity, lineTotal: l.price * quantity } : l))
      .filter((l) => l.quantity > 0);
    setCart({ ...cart, items, totals: { ...cart.totals, subtotal: items.filter((l) => l.available).reduce((s, l) => s + l.lineTotal, 0) } });
    setError("You seem to be offline; this change is shown here and will be retried.");
  }

  function setQuantity(e: React.FormEvent, line: CartLine, quantity: number) {
    return run(e, () => api("PUT", "/api/store/{storeId}/cart/items/{cartItemId}", { params: { storeId, cartItemId: line.id }, body: { quantity } }), () => changeLocally(line, quantity), "Failed to update cart item");
  }
  function remove(e: React.FormEvent, line: CartLine) {
    return run(e, () => api("DELETE", "/api/store/{storeId}/cart/items/{cartItemId}", { params: { storeId, cartItemId: line.id } }), () => changeLocally(line, 0), "Failed to remove item from cart");
  }
  function clear(e: React.FormEvent) {
    return run(e, async () => { await api("DELETE", "/api/store/{storeId}/cart", { params: { storeId } }); clearLocal(props.storeId); setLocal([]); return null; },
      () => setError("Failed to clear cart"), "Failed to clear cart");
  }

  const items = cart?.items ?? [];
  const currency = cart?.totals.currency ?? "USD";
  const localTotal = local.reduce((s, l) => s + l.price * l.quantity, 0);
  if (items.length === 0 && local.length === 0) {
    return (
      <div className="cart" data-hydrated={hydrated || undefined}>
        {error && <p className="inline-error" role="alert">{error}</p>}
        <p className="state empty">Your cart is empty</p>
        <a className="button" href={base + "/store"}>Continue Shopping</a>
      </div>
    );
  }
  return (
    <div className="cart" data-hydrated={hydrated || undefined}>
      {error && <p className="inline-error" role="alert">{error}</p>}
      <ul className="cart-lines">
        {items.map((line) => {
          const image = line.storeItem.media[0];
          const fixed = line.storeItem.type === "SUBSCRIPTION";
          const plusOff = busy || fixed || !line.available || (line.maxQuantity !== null && line.quantity >= line.maxQuantity);
          const action = base + "/cart/items/" + line.id;
          return (
            <li key={line.id} className={"cart-line" + (line.available ? "" : " unavailable")}>
              {image ? <Img media={image} alt="" sizes="72px" box={[72, 72]} /> : <span className="item-placeholder small" />}
              <div className="cart-line-body">
                <a href={base + "/store/items/" + line.itemId}>{line.storeItem.name}</a>
                {line.selectedVariants.map((v) => (
                  <p className="meta" key={v.name}>{v.name + ": " + v.value}</p>
                ))}
                <p className="meta">{formatMoney(line.price, line.currency) + " each"}</p>
                {line.issue && <p className="inline-error">{issueText[line.issue]}</p>}
                <div className="qty">
                  <form method="post" action={action} onSubmit={(e) => setQuantity(e, line, line.quantity - 1)}>
                    <input type="hidden" name="quantity" value={line.quantity - 1} />
                    <button type="submit" className="icon-button qty-minus" aria-label="Decrease quantity" disabled={busy || line.quantity <= 1}>−</button>
                  </form>
                  <span className="qty-value" aria-label="Quantity">{line.quantity}</span>
                  <form method="post" action={action} onSubmit={(e) => setQuantity(e, line, line.quantity + 1)}>
                    <input type="hidden" name="quantity" value={line.quantity + 1} />
                    <button type="submit" className="icon-button qty-plus" aria-label="Increase quantity" disabled={plusOff}>+</button>
                  </form>
                  <form method="post" action={action} onSubmit={(e) => remove(e, line)}>
                    <input type="hidden" name="remove" value="1" />
                    <button type="submit" className="link-button" disabled={busy}>Remove</button>
                  </form>
                </div>
              </div>
              <p className="line-total">{formatMoney(line.lineTotal, line.currency)}</p>
            </li>
          );
        })}
        {local.map((l) => (
          <li key={"local-" + l.itemId + (l.variantId ?? "")} className="cart-line pending">
            <span className="item-placeholder small" />
            <div className="cart-line-body">
              <span>{l.name}</span>
              {l.variantLabel && <p className="meta">{l.variantLabel}</p>}
              <p className="meta">{"Quantity " + l.quantity + " · saved on this device, not yet in your cart"}</p>
              <button type="button" className="link-button" onClick={() => { setLocalQuantity(props.storeId, l.itemId, l.variantId, 0); setLocal(readLocal(props.storeId)?.items ?? []); }}>Remove</button>
            </div>
            <p className="line-total">{formatMoney(l.price * l.quantity, l.currency)}</p>
          </li>
        ))}
      </ul>
      <p className="subtotal">
        Subtotal <strong>{formatMoney((cart?.totals.subtotal ?? 0) + localTotal, currency)}</strong>
      </p>
      <div className="cart-actions">
        <form method="post" action={base + "/cart/clear"} onSubmit={clear}>
          <button type="submit" className="button button-secondary" disabled={busy}>Clear Cart</button>
        </form>
        <a className="button checkout-button" href={base + "/checkout"}>Checkout</a>
      </div>
    </div>
  );
}
