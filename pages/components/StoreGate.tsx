import type { PageProps, StoreAccess } from "../lib/types";
import { AuthButtons } from "./AuthButtons";
import { Layout } from "./Layout";
import { appBase, appHref } from "../lib/links";

// StoreGate is what a store page shows instead of its content when the
// server says the viewer cannot shop (StoreData.access), or null.
// inline: shown under an item's own heading, so its title is an h2.
export function StoreGate({ access, props, inline }: { access: StoreAccess; props: PageProps<any>; inline?: boolean }) {
  const app = props.app!;
  const H = inline ? "h2" : "h1";
  switch (access) {
    case "disabled":
      return (
        <div className="state store-off">
          <H>Store</H>
          <p>This app doesn't have a store enabled.</p>
          <a className="button" href={appHref(app)}>Back to home</a>
        </div>
      );
    case "signin":
      return (
        <div className="state store-gate">
          <H>Store Access Required</H>
          <p>Sign in and follow this app to browse and buy from its store.</p>
          <AuthButtons authUrl={props.authUrl} appName={app.name} className="centered" />
        </div>
      );
    case "follow":
      return (
        <div className="state store-gate">
          <H>Follow App to Access Store</H>
          <p>The store is open to followers. Following is free.</p>
          <form method="post" action={appBase(app) + "/follow"}>
            <button type="submit" className="button">Follow</button>
          </form>
        </div>
      );
  }
  return null;
}

// discountPercent is SPEC.md section 9's rounded discount, or 0.
export function discountPercent(price: number, compare: number | null): number {
  if (compare == null || compare <= price || compare <= 0) return 0;
  return Math.round(((compare - price) / compare) * 100);
}

// stockLabel: low at 5 or fewer, out at 0, untracked when null (SPEC.md 9).
export function stockLabel(stock: number | null): { text: string; className: string } {
  if (stock === null) return { text: "Available", className: "stock-untracked" };
  if (stock <= 0) return { text: "Out of stock", className: "stock-out" };
  if (stock <= 5) return { text: "Only " + stock + " left", className: "stock-low" };
  return { text: "In stock", className: "stock-in" };
}

// storeGatePage is the whole page a store screen answers when the viewer
// cannot shop, or null when they can and the screen renders itself.
export function storeGatePage(props: PageProps<any>, access: StoreAccess) {
  if (access === "ok") return null;
  return (
    <Layout props={props}>
      <StoreGate access={access} props={props} />
    </Layout>
  );
}
