import type { ComponentType, ReactElement } from "react";
import AppsIndex, * as appsIndex from "./AppsIndex";
import ErrorPage, * as errorPage from "./ErrorPage";
import Landing, * as landing from "./Landing";
import AuthForm, * as authForm from "./AuthForm";
import Profile, * as profile from "./Profile";
import Community, * as community from "./Community";
import Post, * as post from "./Post";
import { CreatePost, CreateStory } from "./CreateContent";
import Store, * as storePage from "./Store";
import StoreItem, * as storeItem from "./StoreItem";
import Cart, * as cart from "./Cart";
import ItemEdit, * as itemEdit from "./ItemEdit";
import Events, * as events from "./Events";
import Event, * as event from "./Event";
import CreateEvent, * as createEvent from "./CreateEvent";
import Notifications, * as notifications from "./Notifications";
import Search, * as search from "./Search";
import ComingSoon, * as comingSoon from "./ComingSoon";
import PlanCheckout, * as planCheckout from "./PlanCheckout";
import Membership, * as membership from "./Membership";
import TierChange, * as tierChange from "./TierChange";
import Donate, * as donate from "./Donate";
import Donations, * as donations from "./Donations";
import Checkout, * as checkout from "./Checkout";
import Orders, * as orders from "./Orders";
import Order, * as order from "./Order";
import PaymentSuccess, * as paymentSuccess from "./PaymentSuccess";
import CancelOrder, * as cancelOrder from "./CancelOrder";
import Transactions, * as transactions from "./Transactions";
import ManageOrders, * as manageOrders from "./ManageOrders";
import Report, * as report from "./Report";
import Moderation, * as moderation from "./Moderation";
import Unsubscribe, * as unsubscribe from "./Unsubscribe";
import Account, * as account from "./Account";
import Studio, * as studio from "./Studio";

// A page module as the server entry sees it. goja bundles need static
// imports, so every page is listed here by the name Go renders it with.
export type PageModule = {
  component: ComponentType<any>;
  head?: (props: any) => ReactElement | null;
  status?: (props: any) => number;
  // criticalCSS: the critical blocks of pages/styles.css cover this page's first screen, so the
  // document inlines it and links the full stylesheet at the end of the
  // body, where it no longer delays the first paint.
  criticalCSS?: boolean;
};

export const pages: Record<string, PageModule> = {
  Unsubscribe: { component: Unsubscribe, head: unsubscribe.head },
  Account: { component: Account, head: account.head, status: account.status },
  AppsIndex: { component: AppsIndex, head: appsIndex.head },
  ErrorPage: { component: ErrorPage, head: errorPage.head, status: errorPage.status },
  Landing: { component: Landing, head: landing.head, criticalCSS: true },
  AuthForm: { component: AuthForm, head: authForm.head, status: authForm.status },
  Profile: { component: Profile, head: profile.head },
  Community: { component: Community, head: community.head, criticalCSS: true },
  Post: { component: Post, head: post.head, status: post.status },
  CreatePost,
  CreateStory,
  Store: { component: Store, head: storePage.head },
  StoreItem: { component: StoreItem, head: storeItem.head, status: storeItem.status },
  Cart: { component: Cart, head: cart.head },
  ItemEdit: { component: ItemEdit, head: itemEdit.head },
  Events: { component: Events, head: events.head },
  Event: { component: Event, head: event.head, status: event.status },
  CreateEvent: { component: CreateEvent, head: createEvent.head },
  Notifications: { component: Notifications, head: notifications.head },
  Search: { component: Search, head: search.head },
  ComingSoon: { component: ComingSoon, head: comingSoon.head },
  PlanCheckout: { component: PlanCheckout, head: planCheckout.head },
  Membership: { component: Membership, head: membership.head },
  TierChange: { component: TierChange, head: tierChange.head },
  Donate: { component: Donate, head: donate.head },
  Donations: { component: Donations, head: donations.head },
  Checkout: { component: Checkout, head: checkout.head },
  Orders: { component: Orders, head: orders.head },
  Order: { component: Order, head: order.head, status: order.status },
  PaymentSuccess: { component: PaymentSuccess, head: paymentSuccess.head },
  CancelOrder: { component: CancelOrder, head: cancelOrder.head },
  Transactions: { component: Transactions, head: transactions.head },
  ManageOrders: { component: ManageOrders, head: manageOrders.head },
  Report: { component: Report, head: report.head },
  Moderation: { component: Moderation, head: moderation.head },
  Studio: { component: Studio, head: studio.head },
};
