// The JSON shapes the Go server sends to pages and islands (SPEC.md section 3).

export type Role = "PUBLIC" | "AUTHENTICATED" | "FOLLOWER" | "SUBSCRIBER" | "MODERATOR" | "ADMIN" | "CREATOR";

export interface MediaView {
  id: string;
  name: string;
  type: "IMAGE" | "VIDEO" | "OTHER";
  size: number;
  mimeType: string;
  path: string;
  description: string;
  mediaKey: string;
  appId: string | null;
  signedUrl: string;
  // An image's intrinsic size and its resized copies as a srcset value,
  // once the server has made them (absent before, and for video).
  width?: number;
  height?: number;
  srcset?: string;
  createdAt: string;
}

export interface UserSummary {
  id: string;
  username: string;
  media: MediaView[];
  donorTier?: string;
}

export interface MessageView {
  id: string;
  content: string;
  type: "POST" | "STORY" | "REPLY";
  senderId: string;
  sender: UserSummary;
  attachments: { id: string; mediaId: string; media: MediaView }[];
  reactions: { id: string; reaction: string; mediaId: string | null; sender: { id: string } }[];
  tags: { id: string; name: string }[];
  replies?: MessageView[];
  createdAt: string;
  _count: { reactions: number; replies: number };
  parentMessageId: string | null;
  communityId: string;
  isFeatured: boolean;
}

export interface EventView {
  id: string;
  appId: string;
  name: string;
  description: string;
  location: string;
  startDate: string;
  endDate: string;
  type: "LIVESTREAM" | "MEETUP" | "CLASS" | "CONFERENCE" | "OTHER";
  isFeatured: boolean;
  isOfficial: boolean;
  banner: MediaView | null;
  media: MediaView[];
  attendeeCount: number;
  isAttending: boolean;
  userRole: "HOST" | "MODERATOR" | "ATTENDEE" | null;
  creatorId: string;
}

export interface VariantView {
  id: string;
  name: string;
  value: string;
  priceAdjustment: number;
  price: number;
  stock: number | null;
}

export interface ItemView {
  id: string;
  storeId: string;
  name: string;
  description: string;
  type: "PHYSICAL" | "DIGITAL" | "SERVICE" | "SUBSCRIPTION" | "EVENT_TICKET";
  price: number;
  comparePrice: number | null;
  currency: string;
  stock: number | null;
  sku: string;
  isFeatured: boolean;
  media: MediaView[];
  tags: { id: string; name: string }[];
  variants: VariantView[];
  // The event an EVENT_TICKET admits to, null when unlinked.
  eventId?: string | null;
}

export interface LinkItem {
  id: string;
  title: string;
  url: string;
  icon: string;
  enabled: boolean;
}

export interface ContentSettings {
  create_permission: string;
}

export interface AppSettings {
  basic: { displayName: string; metaDescription: string; keywords: string };
  ui: { footerOrder: string[] };
  landingPage: { showLinkInBio: boolean };
  features: {
    community: {
      enabled: boolean;
      name: string;
      description: string;
      settings: {
        content_settings: ContentSettings;
        allowReactions: boolean;
        allowSharing: boolean;
        allowReporting: boolean;
        allowComments: boolean;
      };
    };
    store: { enabled: boolean };
    events: { enabled: boolean; settings: { content_settings: ContentSettings } };
    chat: { enabled: boolean };
    donations: { enabled: boolean; settings: { suggestedAmounts: number[] } };
    links: { enabled: boolean; settings: { links: LinkItem[]; layout: string } };
    subscriptionGating: {
      enabled: boolean;
      settings: { required: boolean; landingPageOnly: boolean; description: string };
    };
  };
}

export interface AppView {
  id: string;
  name: string;
  status: string;
  version: string;
  description: string;
  bio: string;
  media: MediaView[];
  logo: MediaView | null;
  banner: MediaView | null;
  title: MediaView | null;
  splash: MediaView | null;
  settings: AppSettings;
  donationTiers: { id: string; name: string; requiredAmount: number; description: string }[];
  suggestedDonationAmounts: number[];
  community: { id: string; name: string; description: string; _count: { posts: number }; posts: MessageView[] } | null;
  store: { id: string; currency: string; items: ItemView[] } | null;
  events: EventView[];
  _count: { members: number; events: number; quizzes: number; media: number };
  recentPosts: MessageView[];
  upcomingEvents: EventView[];
  featuredStoreItems: ItemView[];
}

export interface Permissions {
  canPost: boolean;
  canCreateStories: boolean;
  canCreateEvents: boolean;
  canModerate: boolean;
  canManage: boolean;
  canAccessStore: boolean;
  canManageStore: boolean;
  canFeature: boolean;
  canComment: boolean;
  canReact: boolean;
  canUpload: boolean;
  canFollow: boolean;
  canUnfollow: boolean;
  canJoinEvents: boolean;
  canDonate: boolean;
  canNotifications: boolean;
  canSearch: boolean;
}

export interface ViewerProps {
  user: { id: string; username: string; pictureUrl: string } | null;
  role: Role;
  permissions: Permissions;
  gated: boolean;
}

// PageProps mirrors server.PageProps.
export interface PageProps<D = unknown> {
  app: AppView | null;
  viewer: ViewerProps;
  path: string;
  publicUrl: string;
  authUrl: string;
  now: string;
  data: D;
  error?: string;
  status?: number;
  // Stripe's publishable key when cards are configured.
  stripeKey?: string;
}

// AccountUser is the user of GET /api/auth/me (server: store.AccountUser).
export interface AccountUser {
  id: string;
  username: string;
  email: { email: string };
  emailVerified: boolean;
  createdAt: string;
  profilePicture: { signedUrl: string; updatedAt: string } | null;
  media: { signedUrl: string; updatedAt: string } | null;
}

// Store (server/store_items.go, store_item.go, cart.go).
export type StoreAccess = "ok" | "signin" | "follow" | "disabled";

export interface StorePagination {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
  hasNext: boolean;
  hasPrev: boolean;
}

export interface StoreData {
  access: StoreAccess;
  storeId: string;
  items: ItemView[];
  pagination: StorePagination;
  filters: { type: string; min: string; max: string; inStock: boolean; search: string; tags: string };
  cartCount: number;
}

export interface ItemData {
  access: StoreAccess;
  storeId: string;
  item: ItemView | null;
  inCart: string[];
  cartCount: number;
  added: boolean;
  // chooseVariant: an add without a variant was refused (JavaScript off);
  // the form asks for one.
  chooseVariant?: boolean;
  event?: EventOption | null;
}

export interface CartLine {
  id: string;
  itemId: string;
  storeItemId: string;
  storeItem: ItemView;
  item: ItemView;
  variantId: string | null;
  selectedVariants: { name: string; value: string }[];
  quantity: number;
  price: number;
  lineTotal: number;
  currency: string;
  maxQuantity: number | null;
  available: boolean;
  // VARIANT_REQUIRED: a line without the size its item asks for (added
  // before sizes were required); it cannot be ordered as it stands.
  issue?: "DELETED" | "OUT_OF_STOCK" | "INSUFFICIENT_STOCK" | "VARIANT_UNAVAILABLE" | "VARIANT_REQUIRED";
}

export interface CartView {
  id: string;
  storeId: string;
  status: string;
  items: CartLine[];
  totals: { subtotal: number; itemCount: number; currency: string };
  expiresAt: string | null;
  createdAt: string | null;
  updatedAt: string | null;
  appUserRel: { userId: string };
}

export interface CartData {
  access: StoreAccess;
  storeId: string;
  cart: CartView | null;
  notice?: string;
}

export interface ItemEditData {
  storeId: string;
  item: ItemView | null;
  types: string[];
  events: EventOption[];
}

// EventOption is an event the ticket form can link an item to.
export interface EventOption {
  id: string;
  name: string;
  startDate: string;
}

// Memberships and donations (server/subscriptions.go, server/donations.go).
export interface SubscriptionPlanView {
  id: string;
  storeItemId: string;
  name: string;
  billingCycle: "MONTHLY" | "YEARLY";
  price: number;
  currency: string;
}

export interface SubscriptionStatus {
  hasValidSubscription: boolean;
  status: "NONE" | "ACTIVE" | "PAST_DUE" | "CANCELED" | "EXPIRED";
  currentPeriodEnd: string | null;
  cancelAtPeriodEnd: boolean;
  graceUntil: string | null;
  planId: string | null;
  plan: SubscriptionPlanView | null;
}

export interface PlanItem extends ItemView {
  subscriptionPlan?: { id: string; storeItemId: string; billingCycle: "MONTHLY" | "YEARLY" };
}

export interface DonationTierView {
  id: string;
  name: string;
  requiredAmount: number;
  description: string;
}

export interface DonorStanding {
  total: number;
  tier: DonationTierView | null;
}

export interface DonationView {
  id: string;
  amount: number;
  currency: string;
  message: string;
  status: string;
  createdAt: string;
  processedAt: string | null;
  donor: { id: string; username: string };
}

// Checkout and orders (server/checkout.go, orders_pages.go; store/order.go).
export type OrderStatus = "PENDING" | "PAID" | "PROCESSING" | "SHIPPED" | "DELIVERED" | "CANCELLED" | "REFUNDED";

export interface OrderItemView {
  id: string;
  storeItemId: string;
  variantId: string | null;
  storeItem: { name: string; type: string; media: MediaView[] };
  quantity: number;
  price: number;
  currency: string;
  customOptions: Record<string, string>;
  downloads?: MediaView[];
}

export interface OrderView {
  id: string;
  orderNumber: string;
  status: OrderStatus;
  items: OrderItemView[];
  subtotal: number;
  platformFee: number;
  total: number;
  currency: string;
  paymentMethod: string;
  shippingAddress: string;
  notes: string;
  trackingNumber: string;
  refundReason: string;
  /** Money given back so far; below the total the status stays as it was. */
  refundedAmount: number;
  createdAt: string;
  updatedAt: string;
  paidAt: string | null;
  shippedAt: string | null;
  deliveredAt: string | null;
  cancelledAt: string | null;
  refundedAt: string | null;
  needsShipping: boolean;
  next: OrderStatus[];
  buyer?: { id: string; username: string; email: string };
}

export interface ShippingAddress {
  firstName: string;
  lastName: string;
  address: string;
  city: string;
  state: string;
  zipCode: string;
  country: string;
  phone?: string;
}

export interface PaymentConfig {
  stripe: { publishableKey: string };
  paypal: { enabled: boolean };
  crypto: { enabled: boolean };
  methods: string[];
  defaultMethod: string;
}

export interface CheckoutStep {
  key: "review" | "shipping" | "payment";
  label: string;
  state: "done" | "current" | "todo";
  href?: string;
}

export interface CheckoutData {
  access: StoreAccess;
  storeId: string;
  step: "review" | "shipping" | "payment";
  steps: CheckoutStep[];
  cart: CartView | null;
  order: OrderView | null;
  address: ShippingAddress;
  countries: string[];
  payment: PaymentConfig;
  walletBalance: number;
  pending: OrderView | null;
  error?: string;
}

export interface OrdersData {
  access: StoreAccess;
  storeId: string;
  orders: OrderView[];
  pagination: StorePagination;
  status: string;
  statuses: OrderStatus[];
  notice?: string;
  error?: string;
}

export interface OrderData {
  access: StoreAccess;
  storeId: string;
  order: OrderView | null;
  canCancel: boolean;
  canFulfil: boolean;
  notice?: string;
  error?: string;
}

export interface PaymentSuccessData {
  access: StoreAccess;
  state: "missing" | "error" | "processing" | "success";
  processor: string;
  order: OrderView | null;
  message?: string;
}

export interface WalletMovement {
  id: string;
  kind: "CREDIT" | "PAYMENT" | "REFUND" | "DONATION";
  amount: number;
  balanceAfter: number;
  currency: string;
  memo: string;
  orderId: string | null;
  createdAt: string;
}

export interface WalletData {
  access: StoreAccess;
  storeId: string;
  wallet: { balance: number; currency: string; movements: WalletMovement[] } | null;
  pagination: StorePagination;
}
