// The JSON shapes the Go server sends to pages and islands (SPEC.md section 3).
// They are generated from the Go structs into generated.ts (go run
// ./scripts/build); this file keeps the names pages and islands import and
// adds only what Go cannot say.

import type { ItemView, PagePropsBase } from "./generated";

export * from "./generated";

// PageProps is server.PageProps with its data typed per page: Go's Data is
// `any` (each page puts its own struct there), which TypeScript can only
// express as a type parameter.
export interface PageProps<D = unknown> extends Omit<PagePropsBase, "data"> {
  data: D;
}

// PlanItem is a store item as the membership plans list it: an ItemView
// whose subscriptionPlan is set (Go has one ItemView for both).
export type PlanItem = ItemView;
