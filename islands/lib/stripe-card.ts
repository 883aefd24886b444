// The card form of the checkout's payment step: Stripe's Payment Element.
// @stripe/stripe-js (and through it Stripe.js from js.stripe.com) is
// imported here dynamically, so it loads only when a member picks the card
// method on the payment step, never on any other page.
export interface CardSession {
  paymentIntentId: string;
  // confirm asks Stripe to charge the card the element collected; it
  // answers Stripe's message when the card was refused. Cards that need a
  // redirect (3-D Secure) come back to returnUrl.
  confirm(returnUrl: string): Promise<{ error?: string }>;
  destroy(): void;
}

export async function mountCard(el: HTMLElement, publishableKey: string, clientSecret: string, paymentIntentId: string): Promise<CardSession> {
  let stripe;
  try {
    const { loadStripe } = await import("@stripe/stripe-js");
    stripe = await loadStripe(publishableKey);
  } catch {
    stripe = null;
  }
  if (!stripe) throw new Error("Failed to initialize payment system");
  const elements = stripe.elements({ clientSecret });
  const element = elements.create("payment");
  element.mount(el);
  return {
    paymentIntentId,
    async confirm(returnUrl: string) {
      const res = await stripe.confirmPayment({ elements, redirect: "if_required", confirmParams: { return_url: returnUrl } });
      return { error: res.error?.message };
    },
    destroy() {
      element.destroy();
    },
  };
}
