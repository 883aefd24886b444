package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"marquee/server/payments"
	"marquee/store"
)

// routes lists every route of both sites in one place.
func (s *Server) routes() {
	for i, e := range []*echo.Echo{s.main, s.auth} {
		e.Pre(headAsGet)
		e.Pre(canonicalPath)
		// Request id, access log line and request metrics (logging.go).
		e.Use(s.observe([]string{"main", "auth"}[i]))
		e.Use(middleware.Recover())
		// One limit for both sites: they share the process's CPU and memory.
		e.Use(s.inFlight.middleware)
		// NUL bytes, invalid UTF-8 and bodies over 1 MB never reach a handler.
		e.Use(checkInput)
		// Slow mobile links: compress pages, JSON and bundles; media is
		// already compressed, and cached pages are stored compressed.
		// Stateless gzip (gzip.go): JSON calls are compressed per request,
		// and a writer held by each request in flight must stay small.
		// Bundles under /static/build are stored compressed (static_build.go).
		e.Use(compress(func(c echo.Context) bool {
			p := c.Request().URL.Path
			return strings.HasPrefix(p, "/media") || strings.HasPrefix(p, "/static/build/") || s.pageCachedRoute(c)
		}))
		e.Use(s.securityHeaders)
		// Refuse cross-site writes before the session is read.
		e.Use(s.refuseCrossSite)
		// Rate limits key on the client address: the connection's, unless
		// it comes from a configured proxy (TRUSTED_PROXIES), whose
		// X-Forwarded-For is then read right to left up to the first
		// address that is not a trusted proxy. Nobody else's header counts.
		e.IPExtractor = s.clientIP
		// Every database call of a request waits at most DB_REQUEST_TIMEOUT
		// for its answer, also on a connection that stalled once open.
		e.Use(s.queryBudget)
		e.Use(s.loadViewer)
		e.GET("/healthz", s.healthz)
		e.GET("/readyz", s.readyz)
		// Both sites render documents that link the icon, the manifest and,
		// when a page has islands, the hashed bundles.
		// The hashed build output is stored compressed (static_build.go).
		e.GET("/static/build/*", s.staticBuild, staticCache)
		e.Group("/static", staticCache).Static("/", "public")
		e.GET("/manifest.webmanifest", s.siteManifest)
		e.GET("/favicon.ico", func(c echo.Context) error { return c.Redirect(http.StatusMovedPermanently, "/static/icon.svg") })
	}

	m := s.main
	m.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusFound, "/apps") })
	m.GET("/metrics", s.metricsPage)
	m.GET("/media/*", s.mediaGet)
	m.GET("/media/i/:id/:variant", s.mediaByID)
	m.GET("/sw.js", s.serviceWorker)
	// Crawlers and feed readers (crawl.go): only what a visitor may open.
	m.GET("/robots.txt", s.robots)
	m.GET("/sitemap.xml", s.sitemapIndex)
	m.GET("/apps/:app/sitemap.xml", s.appSitemap, s.appPage)
	m.GET("/apps/:app/feed.xml", s.appFeed, s.appPage)
	m.GET("/apps/:app/link-icons/:domain", s.linkIcon, s.appPage)

	// Pages.
	m.GET("/apps", s.pageAppsIndex)
	// Create your app (SELF_SERVE_APPS): the form, and the studio.
	m.POST("/apps", s.formCreateApp)
	// Pages every visitor sees alike are cached whole (pagecache.go):
	// cached(path, shareMembers) opts a route in; shareMembers when the page
	// shows nothing personal beyond Viewer.User, so members of one role share
	// a render too.
	cached := func(path string, shareMembers bool) echo.MiddlewareFunc {
		s.cachedRoutes[path] = true
		return s.cachePage(shareMembers)
	}
	m.GET("/apps/:app", s.pageLanding, cached("/apps/:app", true))
	m.GET("/apps/:app/signin", s.redirectToSignIn)
	m.GET("/apps/:app/manifest.webmanifest", s.appManifest)
	// The app's own service worker on this origin (service_worker.go).
	m.GET("/apps/:app/sw.js", s.appServiceWorker)
	// The app's icons, made from its upload or its monogram (app_icons.go).
	m.GET("/apps/:app/icons/:file", s.appIcon)
	m.GET("/signin", s.redirectToSignIn)
	// App sub-pages: the app and the viewer's role are loaded, and the
	// subscription gate applies. Route-level middleware rather than a group:
	// an Echo group with middleware claims every method of its paths, which
	// would turn a wrong method's 405 into a 404.
	app := func(path string, h echo.HandlerFunc) { m.GET("/apps/:app"+path, h, s.appPage, s.subscriptionGate) }
	// Pages with a visitor cache; sharedApp also shares one render between
	// the members of a role.
	cachedApp := func(path string, h echo.HandlerFunc) {
		m.GET("/apps/:app"+path, h, cached("/apps/:app"+path, false), s.appPage, s.subscriptionGate)
	}
	sharedApp := func(path string, h echo.HandlerFunc) {
		m.GET("/apps/:app"+path, h, cached("/apps/:app"+path, true), s.appPage, s.subscriptionGate)
	}
	app("/profile", s.pageProfile)
	sharedApp("/community", s.pageCommunity)
	sharedApp("/posts/:postId", s.pagePost)
	app("/create-post", s.pageCreate("CreatePost"))
	app("/create-story", s.pageCreate("CreateStory"))
	cachedApp("/store", s.pageStore)
	app("/store/items/new", s.pageItemEdit)
	cachedApp("/store/items/:itemId", s.pageStoreItem)
	app("/store/items/:itemId/edit", s.pageItemEdit)
	m.POST("/apps/:app/store/items/new", s.formSaveItem, s.appPage, s.subscriptionGate)
	m.POST("/apps/:app/store/items/:itemId/edit", s.formSaveItem, s.appPage, s.subscriptionGate)
	// A DIGITAL item's files (item_files.go): the creator uploads them; a
	// buyer downloads them through a link signed for them.
	m.POST("/apps/:app/store/items/:itemId/files", s.formItemFileUpload, s.appPage)
	m.GET("/apps/:app/downloads/:fileId", s.downloadItemFile, s.appPage)
	app("/cart", s.pageCart)
	// Store forms for browsers without JavaScript: they write through the
	// same store calls as the API and redirect back (POST, then GET).
	appForm := func(path string, h echo.HandlerFunc) { m.POST("/apps/:app"+path, h, s.appPage, s.seesOwnWrite) }
	appForm("/cart/items", s.formCartAdd)
	appForm("/cart/items/:cartItemId", s.formCartUpdate)
	appForm("/cart/clear", s.formCartClear)
	appForm("/follow", s.formFollow)
	// The profile's and the community's actions as plain forms too
	// (profile_form.go, message_form.go); the islands call the API.
	appForm("/unfollow", s.formUnfollow)
	appForm("/signout", s.formSignOut)
	appForm("/profile/picture", s.formProfilePicture)
	appForm("/posts/:postId/like", s.formLike)
	appForm("/posts/:postId/publish", s.formPublish)
	// Writing needs a confirmed e-mail, with JavaScript as without (REQUIRE_VERIFIED_EMAIL).
	m.POST("/apps/:app/posts/:postId/comments", s.formComment, s.appPage, s.verifiedEmail, s.seesOwnWrite)
	m.POST("/apps/:app/create-post", s.formCreate("CreatePost", store.MessagePost), s.appPage, s.subscriptionGate, s.verifiedEmail)
	m.POST("/apps/:app/create-story", s.formCreate("CreateStory", store.MessageStory), s.appPage, s.subscriptionGate, s.verifiedEmail)
	app("/notifications", s.pageNotifications)
	appForm("/notifications/read", s.formReadNotifications)
	appForm("/notifications/settings", s.formNotificationPrefs)
	app("/search", s.pageSearch)
	app("/chat", s.pageComingSoon("Chat", "Chat is coming soon", "Talk with the creator and other members here, soon."))
	// Memberships and donations: the plan checkout is under /checkout, which
	// the gate lets through; the profile's membership form and the donation
	// form are open to gated members too (the profile is).
	app("/checkout/plan/:itemId", s.pagePlanCheckout)
	m.POST("/apps/:app/checkout/plan/:itemId", s.formPlanCheckout, s.appPage, s.subscriptionGate, s.verifiedEmail, s.seesOwnWrite)
	appForm("/profile/membership", s.formMembership)
	// The membership page (membership_page.go): the tiers side by side with
	// the member's own, Join / Upgrade / Downgrade / Cancel as plain forms.
	app("/membership", s.pageMembership)
	m.POST("/apps/:app/membership/cancel", s.formMembershipCancel, s.appPage, s.subscriptionGate, s.seesOwnWrite)
	// Moving between tiers (membership_change.go): the confirmation and its form.
	app("/membership/change/:itemId", s.pageTierChange)
	// Back from Stripe Checkout with a card trial's card (card_trial.go).
	app("/membership/card-trial", s.pageCardTrialReturn)
	// PayPal's return from a tier change's approvals (membership_change_paypal.go).
	app("/membership/paypal/:changeId", s.pagePayPalTierChange)
	m.POST("/apps/:app/membership/change/:itemId", s.formTierChange, s.appPage, s.subscriptionGate, s.seesOwnWrite)
	// A card member's way to Stripe's customer portal (membership_portal.go).
	m.POST("/apps/:app/membership/portal", s.formMembershipPortal, s.appPage, s.subscriptionGate)
	app("/donate", s.pageDonate)
	m.POST("/apps/:app/donate", s.formDonate, s.appPage, s.verifiedEmail)
	app("/donations", s.pageDonations)
	// Checkout, orders, the wallet and fulfilment.
	app("/checkout", s.pageCheckout)
	app("/orders", s.pageOrders)
	app("/orders/:orderId", s.pageOrder)
	// The return from PayPal captures the payment: a write the next page shows.
	m.GET("/apps/:app/payment-success", s.pagePaymentSuccess, s.appPage, s.subscriptionGate, s.seesOwnWrite)
	app("/cancel_order", s.pageCancelOrder)
	app("/transactions", s.pageTransactions)
	// Adding funds to the wallet (wallet_topup.go): the form and the page
	// PayPal (or a card's redirect) sends the member back to.
	m.POST("/apps/:app/wallet/topup", s.formTopup, s.appPage, s.verifiedEmail)
	app("/wallet/topup/return", s.pageTopupReturn)
	app("/manage/orders", s.pageManageOrders)
	appForm("/checkout", s.formCheckout)
	appForm("/checkout/shipping", s.formCheckoutShipping)
	m.POST("/apps/:app/checkout/pay", s.formCheckoutPay, s.appPage, s.verifiedEmail, s.seesOwnWrite)
	appForm("/orders/:orderId/cancel", s.formOrderCancel)
	appForm("/orders/:orderId/refund", s.formOrderRefund)
	appForm("/manage/orders/:orderId", s.formManageOrder)
	cachedApp("/events", s.pageEvents)
	app("/events.ics", s.eventsFeed)
	cachedApp("/events/:eventId", s.pageEvent)
	app("/events/:eventId/calendar.ics", s.eventCalendar)
	app("/create-event", s.pageCreateEvent)
	// Join/Leave without JavaScript posts here and is sent back to the event.
	m.POST("/apps/:app/events/:eventId/attend", s.formAttendEvent, s.appPage, s.subscriptionGate)
	m.POST("/apps/:app/create-event", s.formCreateEvent, s.appPage, s.subscriptionGate, s.verifiedEmail)
	// Moderation (issue 26): the report form every Report link leads to,
	// and the review queue, bans and audit log of the studio, all plain
	// forms that work without JavaScript.
	app("/report", s.pageReport)
	appForm("/report", s.formReport)
	app("/studio/moderation", s.pageModeration)
	appForm("/studio/moderation", s.formModerationAction)
	appForm("/studio/moderation/settings", s.formModerationSettings)

	// Mail: one-click unsubscribe (RFC 8058) and its page.
	m.GET("/mail/unsubscribe/:token", s.pageUnsubscribe)
	m.POST("/mail/unsubscribe/:token", s.postUnsubscribe)

	// The creator studio (studio*.go): creator and admins only
	// (access.CanOpenStudio); every form posts and redirects back. Staff
	// pass the subscription gate anyway, so it is not asked.
	studio := func(path string, h echo.HandlerFunc) { m.GET("/apps/:app"+path, h, s.appPage) }
	studio("/studio", s.pageStudio)
	// Launch (studio_launch.go, launch_preview.go): the checklist, Publish
	// and Unpublish, and previews as a visitor or a member.
	studio("/studio/launch", s.pageStudioLaunch)
	appForm("/studio/launch", s.formStudioLaunch)
	appForm("/studio/preview", s.formStudioPreview)
	appForm("/studio/profile", s.formStudioProfile)
	appForm("/studio/links", s.formStudioLinks)
	appForm("/studio/images", s.formStudioImage)
	studio("/studio/features", s.pageStudioFeatures)
	appForm("/studio/features", s.formStudioFeatures)
	studio("/studio/plans", s.pageStudioPlans)
	appForm("/studio/plans", s.formStudioPlan)
	appForm("/studio/plans/:itemId", s.formStudioPlan)
	appForm("/studio/plans/:itemId/archive", s.formStudioPlanArchive)
	appForm("/studio/plans/:itemId/state", s.formStudioPlanState)
	appForm("/studio/plans/:itemId/move", s.formStudioPlanMove)
	studio("/studio/members", s.pageStudioMembers)
	appForm("/studio/members/:userId", s.formStudioMember)
	appForm("/studio/members/:userId/credit", s.formStudioCredit)
	appForm("/studio/members/:userId/gift", s.formStudioGift)
	studio("/studio/offers", s.pageStudioOffers)
	appForm("/studio/offers", s.formStudioOffer)
	appForm("/studio/offers/:offerId/active", s.formStudioOfferActive)
	appForm("/studio/wallet", s.formStudioWelcomeCredit)
	studio("/studio/analytics", s.pageStudioAnalytics)
	studio("/studio/export/:kind", s.studioExport)
	// Payouts (studio_payouts.go): the app's Stripe Connect account and
	// the creator's statement.
	studio("/studio/payouts", s.pageStudioPayouts)
	studio("/studio/payouts/statement.csv", s.studioStatementCSV)
	appForm("/studio/payouts/connect", s.formPayoutsConnect)
	studio("/studio/payouts/refresh", s.pagePayoutsRefresh)
	studio("/studio/payouts/return", s.pagePayoutsReturn)
	appForm("/studio/payouts/dashboard", s.formPayoutsDashboard)
	studio("/studio/paypal", s.pageStudioPayPal)
	appForm("/studio/paypal", s.formStudioPayPal)
	// Newsletter (studio_newsletter.go): settings, how each mailed post
	// went, undeliverable addresses, a test mail to oneself.
	studio("/studio/newsletter", s.pageStudioNewsletter)
	appForm("/studio/newsletter", s.formStudioNewsletter)
	appForm("/studio/newsletter/test", s.formStudioNewsletterTest)
	// Theme (studio_theme.go): colours, scheme, font and corners, and a
	// preview of them without JavaScript.
	studio("/studio/theme", s.pageStudioTheme)
	studio("/studio/theme/preview", s.pageStudioThemePreview)
	appForm("/studio/theme", s.formStudioTheme)
	appForm("/studio/icon", s.formStudioIcon)
	// Export and delete the app (studio_data.go).
	studio("/studio/data", s.pageStudioData)
	studio("/studio/data/export", s.downloadAppExport)
	appForm("/studio/data/export", s.formStudioExport)
	appForm("/studio/data/delete", s.formStudioDeleteApp)
	// Custom domain (studio_domain.go).
	studio("/studio/domain", s.pageStudioDomain)
	appForm("/studio/domain", s.formStudioDomain)
	appForm("/studio/domain/check", s.formStudioDomainCheck)
	appForm("/studio/domain/remove", s.formStudioDomainRemove)
	// A custom domain's sign-in, handed over from the auth host
	// (domain_signin.go): /auth/callback on the domain.
	m.GET("/apps/:app/auth/callback", s.domainCallback)
	m.GET("/apps/:app/authenticate/:page", s.domainAuthStart)
	// Proxies that issue certificates on demand ask which domains to serve.
	m.GET("/internal/domains/allowed", s.internalDomainAllowed)
	// Shipping zones (studio_shipping.go).
	studio("/studio/shipping", s.pageStudioShipping)
	appForm("/studio/shipping", s.formStudioShippingZone)
	appForm("/studio/shipping/:zoneId", s.formStudioShippingZone)
	appForm("/studio/shipping/:zoneId/delete", s.formStudioShippingDelete)

	// JSON API (SPEC.md section 7).
	api := m.Group("/api")
	api.GET("/app/:appId/landing", s.apiLanding)

	// Accounts and following.
	api.GET("/auth/me", s.apiMe)
	api.POST("/auth/logout", s.apiLogout)
	api.POST("/notifications/follow/:appId", s.apiFollow)
	api.POST("/notifications/unfollow/:appId", s.apiUnfollow)

	// Notifications and web push.
	api.GET("/notifications/unread/:appId", s.apiUnreadNotifications)
	api.POST("/notifications/read/:appId", s.apiReadNotifications)
	api.GET("/notifications/vapid-key", s.apiVapidKey)
	api.POST("/notifications/enable-push/:appId", s.apiEnablePush)
	api.GET("/notifications/preferences/:appId", s.apiNotificationPrefs)
	api.PUT("/notifications/preferences/:appId", s.apiSetNotificationPrefs)
	api.GET("/search/apps/:appId", s.apiSearch)

	// Community, messages and media.
	api.GET("/community/:communityId/posts", s.apiCommunityPosts)
	api.GET("/community/:communityId/stories", s.apiCommunityStories)
	api.GET("/messages", s.apiMessages)
	api.POST("/messages", s.apiCreateMessage, s.verifiedEmail)
	api.GET("/messages/:id", s.apiMessage)
	api.DELETE("/messages/:id", s.apiDeleteMessage)
	api.POST("/messages/:id/publish", s.apiPublishMessage)
	api.GET("/messages/:id/replies", s.apiMessageReplies)
	api.GET("/messages/:id/reactions", s.apiReactions)
	api.POST("/messages/:id/reactions", s.apiAddReaction)
	api.DELETE("/messages/:id/reactions/:reactionId", s.apiRemoveReaction)
	api.POST("/media", s.apiCreateMedia)
	api.GET("/media/:id/content", s.apiMediaContent)
	api.POST("/auth/profile-picture", s.apiProfilePicture)
	m.PUT("/media-upload/*", s.mediaUpload)

	// Store and cart.
	api.GET("/store/apps/:appId/store", s.apiStore)
	api.GET("/store/:storeId/items", s.apiStoreItems)
	api.POST("/store/:storeId/items", s.apiCreateItem)
	api.GET("/store/items/:itemId", s.apiStoreItem)
	api.PUT("/store/items/:itemId", s.apiUpdateItem)
	api.DELETE("/store/items/:itemId", s.apiDeleteItem)
	// A DIGITAL item's files, uploaded in parts that resume (item_uploads.go).
	api.POST("/store/items/:itemId/uploads", s.apiItemUploadCreate)
	api.GET("/store/items/:itemId/uploads/:uploadId", s.apiItemUpload)
	api.PUT("/store/items/:itemId/uploads/:uploadId/parts/:number", s.apiItemUploadPart)
	api.POST("/store/items/:itemId/uploads/:uploadId/complete", s.apiItemUploadComplete)
	api.DELETE("/store/items/:itemId/uploads/:uploadId", s.apiItemUploadAbort)
	api.GET("/store/:storeId/cart", s.apiCart)
	api.DELETE("/store/:storeId/cart", s.apiCartClear)
	api.POST("/store/:storeId/cart/items", s.apiCartAdd)
	api.PUT("/store/:storeId/cart/items/:cartItemId", s.apiCartUpdate)
	api.DELETE("/store/:storeId/cart/items/:cartItemId", s.apiCartRemove)
	// Memberships and donations.
	api.POST("/subscriptions/apps/:appId/subscribe", s.apiSubscribe, s.verifiedEmail, s.seesOwnWrite)
	api.POST("/subscriptions/apps/:appId/cancel", s.apiSubscriptionCancel)
	api.GET("/memberships/apps/:appId/tiers", s.apiTiers)
	api.GET("/memberships/apps/:appId/change/:itemId", s.apiTierChangeQuote)
	api.POST("/memberships/apps/:appId/change", s.apiTierChange, s.seesOwnWrite)
	api.POST("/memberships/apps/:appId/portal", s.apiMembershipPortal)
	api.POST("/donations/create", s.apiDonationCreate, s.verifiedEmail)
	api.POST("/donations/process", s.apiDonationProcess, s.verifiedEmail)
	api.GET("/donations/apps/:appId", s.apiDonations)
	// Checkout, payments and orders.
	api.GET("/store/:storeId/stripe-payments/config", s.apiPaymentConfig)
	api.POST("/store/:storeId/orders/checkout", s.apiCheckout)
	api.POST("/store/:storeId/musepay/process", s.apiWalletPay, s.verifiedEmail)
	api.GET("/store/:storeId/orders", s.apiOrders)
	api.GET("/store/:storeId/orders/:orderId", s.apiOrder)
	api.PUT("/store/:storeId/orders/:orderId/shipping", s.apiOrderShipping)
	api.POST("/store/:storeId/orders/:orderId/cancel", s.apiOrderCancel)
	api.GET("/store/:storeId/wallet", s.apiWallet)
	api.POST("/store/:storeId/wallet/topups", s.apiTopupCreate, s.verifiedEmail)
	api.POST("/store/:storeId/wallet/topups/:topupId/confirm", s.apiTopupConfirm)
	// Fulfilment (creator and admins).
	api.GET("/store/:storeId/manage/orders", s.apiManageOrders)
	api.PUT("/store/:storeId/orders/:orderId/status", s.apiOrderStatus)
	api.POST("/store/:storeId/orders/:orderId/refund", s.apiOrderRefund)
	// Card and PayPal payments (SPEC.md section 7 Payments); the providers'
	// webhooks are signature-checked instead of session-checked.
	api.POST("/store/:storeId/stripe-payments/create-intent", s.apiStripeCreateIntent, s.verifiedEmail)
	api.POST("/store/:storeId/stripe-payments/confirm", s.apiStripeConfirm, s.seesOwnWrite)
	api.POST("/store/:storeId/stripe-payments/refund", s.apiPaymentRefund)
	api.POST("/store/:storeId/paypal/create-order", s.apiPayPalCreateOrder, s.verifiedEmail)
	api.POST("/store/:storeId/paypal/capture-order", s.apiPayPalCapture, s.seesOwnWrite)
	api.POST("/webhooks/stripe", s.apiWebhook(payments.Stripe))
	api.POST("/webhooks/paypal", s.apiWebhook(payments.PayPal))
	api.POST("/webhooks/stripe-connect", s.apiConnectWebhook)
	// Apps of one's own and the studio.
	api.GET("/apps/availability", s.apiAppAvailability)
	api.POST("/apps", s.apiCreateApp)
	api.GET("/studio/apps/:appId/launch", s.apiStudioLaunch)
	api.PUT("/studio/apps/:appId/launch", s.apiStudioSetLaunch)
	api.GET("/studio/apps/:appId/members", s.apiStudioMembers)
	api.PUT("/studio/apps/:appId/members/:userId", s.apiStudioSetRole)
	api.DELETE("/studio/apps/:appId/members/:userId", s.apiStudioRemoveMember)
	api.POST("/studio/apps/:appId/members/:userId/credit", s.apiStudioCredit)
	api.POST("/studio/apps/:appId/members/:userId/gift", s.apiStudioGift)
	api.DELETE("/studio/apps/:appId/members/:userId/gift", s.apiStudioEndGift)
	api.GET("/studio/apps/:appId/offers", s.apiStudioOffers)
	api.POST("/studio/apps/:appId/offers", s.apiStudioCreateOffer)
	api.DELETE("/studio/apps/:appId/offers/:offerId", s.apiStudioDeactivateOffer)
	api.GET("/studio/apps/:appId/analytics", s.apiStudioAnalytics)
	api.GET("/studio/apps/:appId/newsletter", s.apiStudioNewsletter)
	api.PUT("/studio/apps/:appId/newsletter", s.apiStudioSetNewsletter)
	api.GET("/studio/apps/:appId/theme", s.apiStudioTheme)
	api.PUT("/studio/apps/:appId/theme", s.apiStudioSetTheme)
	api.POST("/studio/apps/:appId/newsletter/test", s.apiStudioNewsletterTest)
	api.GET("/studio/apps/:appId/domain", s.apiStudioDomain)
	api.PUT("/studio/apps/:appId/domain", s.apiStudioSetDomain)
	api.POST("/studio/apps/:appId/domain/check", s.apiStudioCheckDomain)
	api.DELETE("/studio/apps/:appId/domain", s.apiStudioRemoveDomain)
	api.GET("/studio/apps/:appId/shipping-zones", s.apiStudioShippingZones)
	api.POST("/studio/apps/:appId/shipping-zones", s.apiStudioSaveShippingZone)
	api.PUT("/studio/apps/:appId/shipping-zones/:zoneId", s.apiStudioSaveShippingZone)
	api.DELETE("/studio/apps/:appId/shipping-zones/:zoneId", s.apiStudioDeleteShippingZone)
	// Events.
	api.GET("/events/apps/:appId/events", s.apiEvents)
	api.POST("/events/apps/:appId/events", s.apiCreateEvent, s.verifiedEmail)
	api.GET("/events/:id", s.apiEvent)
	api.PUT("/events/:id", s.apiUpdateEvent)
	api.DELETE("/events/:id", s.apiDeleteEvent)
	api.POST("/events/:id/join", s.apiJoinEvent)
	api.DELETE("/events/:id/leave", s.apiLeaveEvent)
	api.GET("/events/:id/attendees", s.apiEventAttendees)
	api.PUT("/events/:id/attendees/:userId", s.apiSetAttendeeRole)
	api.DELETE("/events/:id/attendees/:userId", s.apiRemoveAttendee)
	// Moderation: reports from members, the review queue and its actions.
	api.POST("/reports", s.apiReport)
	api.GET("/moderation/apps/:appId", s.apiModeration)
	api.POST("/moderation/apps/:appId/actions", s.apiModerationAction)
	api.PUT("/moderation/apps/:appId/settings", s.apiModerationSettings)

	// The auth site: sign-in and sign-up pages and their form posts.
	au := s.auth
	au.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusFound, "/authenticate/signin") })
	au.GET("/authenticate/signin", s.authPage("signin"))
	au.POST("/authenticate/signin", s.postSignIn)
	au.GET("/authenticate/signup", s.authPage("signup"))
	au.POST("/authenticate/signup", s.postSignUp)
	au.GET("/authenticate/welcome", s.pageSignUpWelcome)
	// Hands a sign-in to an app's custom domain (domain_signin.go).
	au.GET("/authenticate/continue", s.authContinue)
	// Password reset and e-mail verification (auth_reset.go).
	au.GET("/authenticate/forgot", s.pageForgotPassword)
	au.POST("/authenticate/forgot", s.postForgotPassword)
	au.GET("/authenticate/reset", s.pageResetPassword)
	au.POST("/authenticate/reset", s.postResetPassword)
	au.GET("/authenticate/verify", s.verifyEmail)
	au.POST("/authenticate/verify/resend", s.resendVerification)
	au.GET("/authenticate/email/undo", s.pageUndoEmailChange)
	au.POST("/authenticate/email/undo", s.postUndoEmailChange)
	// Account settings (account_settings.go).
	au.GET("/authenticate/account", s.pageAccount)
	au.POST("/authenticate/account/email", s.accountAction(s.postAccountEmail))
	au.POST("/authenticate/account/username", s.accountAction(s.postAccountUsername))
	au.POST("/authenticate/account/password", s.accountAction(s.postAccountPassword))
	au.POST("/authenticate/account/signout-others", s.accountAction(s.postSignOutOthers))
	au.POST("/authenticate/account/export", s.accountAction(s.postAccountExport))
	au.GET("/authenticate/account/export", s.downloadExport)
	au.POST("/authenticate/account/delete", s.postAccountDelete)

	// Unknown paths and wrong methods fall to Echo's 404 and 405, which
	// handleError answers in JSON under /api and as a page elsewhere.
}
