// The offline cart of SPEC.md section 4: when a cart call fails, the add is
// kept in localStorage (status ACTIVE, 24 hour expiry, same item and variant
// merged) and sent to the server the next time it answers, so no item is
// lost. The server cart stays the truth; this only holds what it has not
// received yet.
import type { CartView } from "../../pages/lib/types";
import { api, offline } from "./api";

export interface LocalLine {
  itemId: string;
  variantId: string | null;
  quantity: number;
  name: string;
  price: number;
  currency: string;
  variantLabel: string;
}

export interface LocalCart {
  status: "ACTIVE";
  expiresAt: string;
  items: LocalLine[];
}

const DAY = 24 * 60 * 60 * 1000;

function key(storeId: string): string {
  return "marquee-cart:" + storeId;
}

export function readLocal(storeId: string): LocalCart | null {
  try {
    const raw = localStorage.getItem(key(storeId));
    if (!raw) return null;
    const cart = JSON.parse(raw) as LocalCart;
    if (!cart.items?.length || new Date(cart.expiresAt).getTime() < Date.now()) {
      localStorage.removeItem(key(storeId));
      return null;
    }
    return cart;
  } catch {
    return null;
  }
}

function write(storeId: string, cart: LocalCart | null): void {
  try {
    if (!cart || cart.items.length === 0) localStorage.removeItem(key(storeId));
    else localStorage.setItem(key(storeId), JSON.stringify(cart));
  } catch {
    // Storage full or blocked: nothing more we can keep.
  }
}

// addLocal keeps an add the server did not take; the same item and variant
// raise the quantity.
export function addLocal(storeId: string, line: LocalLine): LocalCart {
  const cart = readLocal(storeId) ?? { status: "ACTIVE" as const, expiresAt: "", items: [] };
  cart.expiresAt = new Date(Date.now() + DAY).toISOString();
  const same = cart.items.find((l) => l.itemId === line.itemId && l.variantId === line.variantId);
  if (same) same.quantity += line.quantity;
  else cart.items.push({ ...line });
  write(storeId, cart);
  return cart;
}

export function setLocalQuantity(storeId: string, itemId: string, variantId: string | null, quantity: number): void {
  const cart = readLocal(storeId);
  if (!cart) return;
  cart.items = cart.items
    .map((l) => (l.itemId === itemId && l.variantId === variantId ? { ...l, quantity } : l))
    .filter((l) => l.quantity > 0);
  write(storeId, cart);
}

export function clearLocal(storeId: string): void {
  write(storeId, null);
}

// mergeLocal sends every locally kept line to the server cart. Lines the
// server refuses for a reason (sold out, item gone) are dropped with that
// reason; lines that still cannot reach it stay. Returns the server cart
// when anything was sent, and the refusals.
export async function mergeLocal(storeId: string): Promise<{ cart: CartView | null; refused: string[] }> {
  const local = readLocal(storeId);
  if (!local) return { cart: null, refused: [] };
  let cart: CartView | null = null;
  const refused: string[] = [];
  const left: LocalLine[] = [];
  for (const line of local.items) {
    try {
      cart = await api("POST", "/api/store/{storeId}/cart/items", {
        params: { storeId },
        body: { storeItemId: line.itemId, variantId: line.variantId, quantity: line.quantity },
      });
    } catch (err) {
      if (offline(err)) left.push(line);
      else refused.push(line.name + ": " + (err as Error).message);
    }
  }
  write(storeId, left.length ? { ...local, items: left } : null);
  return { cart, refused };
}
