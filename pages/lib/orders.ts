import type { OrderStatus, OrderView, ShippingAddress } from "./types";

// Status labels of SPEC.md section 4.
export const statusLabels: Record<OrderStatus, string> = {
  PENDING: "Awaiting Payment",
  PAID: "Payment Confirmed",
  PROCESSING: "Processing",
  SHIPPED: "Shipped",
  DELIVERED: "Delivered",
  CANCELLED: "Cancelled",
  REFUNDED: "Refunded",
};

// The buttons of the fulfilment screen, one per move the order may make.
export const actionLabels: Record<string, string> = {
  PROCESSING: "Mark Processing",
  SHIPPED: "Mark Shipped",
  DELIVERED: "Mark Delivered",
  CANCELLED: "Cancel Order",
  REFUNDED: "Refund",
};

const methodLabels: Record<string, string> = { musepay: "Wallet", stripe: "Card", paypal: "PayPal" };

export function methodLabel(method: string): string {
  return methodLabels[method] ?? (method || "Not chosen");
}

export function parseAddress(order: OrderView): ShippingAddress | null {
  if (!order.shippingAddress) return null;
  try {
    return JSON.parse(order.shippingAddress) as ShippingAddress;
  } catch {
    return null;
  }
}

export function itemCount(order: OrderView): number {
  return order.items.reduce((n, it) => n + it.quantity, 0);
}

export function optionsLabel(options: Record<string, string>): string {
  return Object.keys(options)
    .map((k) => k + ": " + options[k])
    .join(", ");
}
