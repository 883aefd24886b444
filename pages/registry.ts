import type { ComponentType, ReactElement } from "react";
import NotFound from "./NotFound";
import AppsIndex, * as appsIndex from "./AppsIndex";
import ErrorPage, * as errorPage from "./ErrorPage";
import Landing, * as landing from "./Landing";

// A page module as the server entry sees it. goja bundles need static
// imports, so every page is listed here by the name Go renders it with.
export type PageModule = {
  component: ComponentType<any>;
  head?: (props: any) => ReactElement | null;
  status?: (props: any) => number;
};

export const pages: Record<string, PageModule> = {
  NotFound,
  AppsIndex: { component: AppsIndex, head: appsIndex.head },
  ErrorPage: { component: ErrorPage, head: errorPage.head, status: errorPage.status },
  Landing: { component: Landing, head: landing.head },
};
