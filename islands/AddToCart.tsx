import { useEffect, useState } from "react";
import { formatMoney } from "../pages/lib/format";
import type { ItemView, StoreAccess } from "../pages/lib/types";
import { api, offline } from "./lib/api";
import { addLocal, mergeLocal } from "./lib/cart-store";
import { useHydrated } from "./lib/hydrated";
import { appPath } from "./lib/links";

interface Props {
  appName: string;
  storeId: string;
  item: ItemView;
  access: StoreAccess;
  // Variant ids ("" for none) of this item already in the cart.
  inCart: string[];
  added: boolean;
  // chooseVariant: the server refused an add without a variant (the form
  // without JavaScript came back); ask for one.
  chooseVariant?: boolean;
}

// AddToCart: variant choice, quantity and the button, as a plain form posting
// to /apps/:app/cart/items (works without JavaScript). Hydrated, it adds
// through the API, shows 'Added' for 2 seconds, and keeps the add locally
// when the server cannot be reached. The rules are SPEC.md section 5.
export default function AddToCart(props: Props) {
  const { item } = props;
  const hydrated = useHydrated();
  const [variantId, setVariantId] = useState<string>("");
  const [quantity, setQuantity] = useState(1);
  const [inCart, setInCart] = useState(props.inCart);
  const [busy, setBusy] = useState(false);
  const [added, setAdded] = useState(props.added);
  const hasVariants = item.variants.length > 0;
  // Variants are chosen, never guessed: an item with variants is not added
  // without one (the server refuses too, in the same words).
  const chooseText = "Please choose a " + (hasVariants ? item.variants[0].name.toLowerCase() : "option") + " for " + item.name;
  const [message, setMessage] = useState(props.chooseVariant && hasVariants ? chooseText : "");
  const [needsChoice, setNeedsChoice] = useState(!!props.chooseVariant && hasVariants);

  useEffect(() => {
    if (!added) return;
    const t = setTimeout(() => setAdded(false), 2000);
    return () => clearTimeout(t);
  }, [added]);
  useEffect(() => {
    // A cart kept offline earlier goes to the server now that it answers.
    mergeLocal(props.storeId).catch(() => {});
  }, []);

  const variant = item.variants.find((v) => v.id === variantId) ?? null;
  const stock = variant && variant.stock !== null ? variant.stock : item.stock;
  const price = item.price + (variant?.priceAdjustment ?? 0);
  const fixedOne = item.type === "SUBSCRIPTION";
  const already = inCart.includes(variantId);
  const soldOut = stock === 0;
  const disabled = busy || soldOut || already || props.access !== "ok";
  const max = fixedOne ? 1 : stock ?? 1000;

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    if (disabled) return;
    if (hasVariants && !variantId) {
      setNeedsChoice(true);
      setMessage(chooseText);
      (document.querySelector(".variants input") as HTMLInputElement | null)?.focus();
      return;
    }
    if (!props.storeId) {
      setMessage("Store not loaded. Please ensure the store is loaded before adding items to cart.");
      return;
    }
    setBusy(true);
    setMessage("");
    const body = { storeItemId: item.id, variantId: variantId || null, quantity: fixedOne ? 1 : quantity };
    try {
      const cart = await api("POST", "/api/store/{storeId}/cart/items", { params: { storeId: props.storeId }, body });
      // The page's Cart button is server HTML outside any island: update
      // its count in place.
      document.querySelectorAll(".cart-count").forEach((el) => (el.textContent = String(cart.totals.itemCount)));
      setInCart([...inCart, variantId]);
      setAdded(true);
    } catch (err) {
      if (offline(err)) {
        addLocal(props.storeId, {
          itemId: item.id, variantId: variantId || null, quantity: body.quantity, name: item.name, price,
          currency: item.currency, variantLabel: variant ? variant.name + ": " + variant.value : "",
        });
        setInCart([...inCart, variantId]);
        setAdded(true);
        setMessage("Saved on this device; it will reach your cart when you are back online.");
      } else {
        setMessage((err as Error).message || "Failed to add item to cart");
      }
    } finally {
      setBusy(false);
    }
  }

  return (
    // Without JavaScript the radios are required, so the browser asks; the
    // island asks in its own words instead (noValidate once hydrated).
    <form className="add-to-cart" method="post" action={appPath(props.appName) + "/cart/items"} onSubmit={submit}
      noValidate={hydrated} data-hydrated={hydrated || undefined}>
      <input type="hidden" name="storeItemId" value={item.id} />
      {item.variants.length > 0 && (
        <fieldset className={"variants" + (needsChoice && !variantId ? " needs-choice" : "")}
          aria-invalid={needsChoice && !variantId ? true : undefined} aria-describedby={needsChoice && !variantId ? "variant-choice" : undefined}>
          <legend>{item.variants[0].name}</legend>
          {item.variants.map((v) => (
            <label key={v.id} data-value={v.value} className={"variant" + (variantId === v.id ? " selected" : "") + (v.stock === 0 ? " sold-out" : "")}>
              <input
                type="radio"
                name="variantId"
                value={v.id}
                checked={variantId === v.id}
                required
                // Clicking the chosen variant again deselects it (SPEC.md 5).
                onClick={() => {
                  setVariantId(variantId === v.id ? "" : v.id);
                  if (message === chooseText) setMessage("");
                }}
                onChange={() => {}}
              />
              {v.value}
              {v.priceAdjustment !== 0 && <span className="meta"> {v.priceAdjustment > 0 ? "+" : ""}{formatMoney(v.priceAdjustment, item.currency)}</span>}
              {v.stock === 0 && <span className="meta"> (sold out)</span>}
            </label>
          ))}
        </fieldset>
      )}
      <p className="price add-price">{formatMoney(price, item.currency)}</p>
      {fixedOne ? (
        <input type="hidden" name="quantity" value="1" />
      ) : (
        <label className="quantity">
          Quantity{" "}
          <input type="number" name="quantity" min={1} max={Math.max(1, max)} value={quantity}
            onChange={(e) => setQuantity(Math.max(1, Math.min(max, Number(e.target.value) || 1)))} />
        </label>
      )}
      <button type="submit" className="button add-button" disabled={disabled}>
        {soldOut ? "Out of stock" : already ? "In cart" : busy ? "Adding..." : "Add to Cart"}
      </button>
      {added && <p className="added-alert" role="status">Added</p>}
      {message && <p className="inline-error" role="alert" id={message === chooseText ? "variant-choice" : undefined}>{message}</p>}
      {already && <p className="meta"><a href={appPath(props.appName) + "/cart"}>View cart</a></p>}
    </form>
  );
}
