package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/uptrace/bun"

	"marquee/store"
)

// public marks a route every viewer may call, visitors included: the route
// says so in the table rather than by having no row.
const public = store.RolePublic

// roleRoute is one row of the role table: a registered route (method and
// path exactly as routes.go registers it), the lowest role of the demo app
// that may call it (SPEC.md section 6: ranks CREATOR > ADMIN > MODERATOR >
// SUBSCRIBER > FOLLOWER > AUTHENTICATED > PUBLIC), and the request that
// exercises it for a viewer. Roles below min must be refused (401, 403, or
// a page that sends them to sign in); min and above must not be.
type roleRoute struct {
	site, method, path string
	min                string
	req                func(v *roleViewer) (target, body string)
}

// roleViewer is one demo account (none for PUBLIC) and what the requests
// need of it.
type roleViewer struct {
	role, email, userID, token string
	fx                         *roleFixture
}

// roleFixture holds the demo app's ids and makes fresh objects for the rows
// whose request changes or removes what it names.
type roleFixture struct {
	t                                    *testing.T
	ts                                   *testServer
	appID, storeID, communityID, postID  string
	itemID, planID, eventID              string
	otherHostEvent, signedGet, signedPut string
	fileID                               string
	creator                              map[string]string
}

// downloadLink is a download link signed for the viewer, to a file of the
// demo's digital item, for an order that does not grant it.
func (fx *roleFixture) downloadLink(v *roleViewer) (string, string) {
	ctx := context.Background()
	if fx.fileID == "" {
		f := &store.ItemFile{ID: store.NewID(), AppID: fx.appID, StoreItemID: fx.itemID, Name: "role.pdf", MimeType: "application/pdf",
			Size: 4, Path: "private/role-table/" + store.NewID() + ".pdf", CreatedAt: time.Now().UTC()}
		if err := fx.ts.store.AddItemFile(ctx, f); err != nil {
			fx.t.Fatal(err)
		}
		fx.fileID = f.ID
	}
	key, err := fx.ts.downloadKey(ctx)
	if err != nil {
		fx.t.Fatal(err)
	}
	return downloadURL(key, "demo", fx.fileID, "no-such-order", v.userID, time.Now().Add(time.Hour)), ""
}

// newUpload is the path of a fresh one-byte upload of the demo's digital item.
func (fx *roleFixture) newUpload() string {
	base := "/api/store/items/" + fx.itemID + "/uploads"
	return base + "/" + fx.asCreator("POST", base, `{"name":"role.pdf","size":1}`)
}

func fixed(target string) func(*roleViewer) (string, string) {
	return func(*roleViewer) (string, string) { return target, "" }
}

func withBody(target, body string) func(*roleViewer) (string, string) {
	return func(*roleViewer) (string, string) { return target, body }
}

// asCreator calls the API as the demo creator and returns data.id.
func (fx *roleFixture) asCreator(method, target, body string) string {
	fx.t.Helper()
	r := fx.ts.do(fx.t, method, target, strings.NewReader(body), fx.creator)
	var out struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.Body), &out); err != nil || out.Data.ID == "" {
		fx.t.Fatalf("%s %s as creator: %d %s", method, target, r.Status, r.Body)
	}
	return out.Data.ID
}

func (fx *roleFixture) newEvent() string {
	start := time.Now().Add(48 * time.Hour).UTC()
	return fx.asCreator("POST", "/api/events/apps/"+fx.appID+"/events", fmt.Sprintf(
		`{"name":"Role table event","startDate":%q,"endDate":%q}`, start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC3339)))
}

// newPlan is a fresh monthly plan of the demo app, for rows that archive one.
func (fx *roleFixture) newPlan() string {
	fx.t.Helper()
	shop, err := fx.ts.store.ShopByID(context.Background(), fx.storeID)
	if err != nil {
		fx.t.Fatal(err)
	}
	price := int64(300)
	it, err := fx.ts.store.SavePlan(context.Background(), shop, "", "", store.PlanInput{Name: "Role table plan", MonthlyPrice: &price})
	if err != nil {
		fx.t.Fatal(err)
	}
	return it.ID
}

func (fx *roleFixture) newPost() string {
	return fx.asCreator("POST", "/api/messages", fmt.Sprintf(`{"content":"role table post","type":"POST","communityId":%q}`, fx.communityID))
}

// cartLine puts the demo item in the viewer's cart and returns the line.
func (v *roleViewer) cartLine() string {
	if v.userID == "" {
		return "none"
	}
	fx := v.fx
	cart, err := fx.ts.store.AddToCart(context.Background(), &store.Shop{ID: fx.storeID, AppID: fx.appID, Currency: "USD"}, v.userID, fx.itemID, nil, 1)
	if err != nil {
		// A role that may not use the store still gets a line to aim at.
		return "none"
	}
	for _, l := range cart.Items {
		if l.StoreItemID == fx.itemID {
			return l.ID
		}
	}
	return "none"
}

// order is a fresh PENDING order of the viewer.
func (v *roleViewer) order() string {
	if v.userID == "" {
		return "none"
	}
	fx := v.fx
	shop := &store.Shop{ID: fx.storeID, AppID: fx.appID, Currency: "USD"}
	ctx := context.Background()
	cart, err := fx.ts.store.AddToCart(ctx, shop, v.userID, fx.itemID, nil, 1)
	if err != nil {
		return "none"
	}
	o, _, err := fx.ts.store.CreateOrder(ctx, shop, v.userID, store.CheckoutInput{CartID: cart.ID})
	if err != nil {
		fx.t.Fatalf("order for %s: %v", v.email, err)
	}
	return o.ID
}

// anyOrder is a fresh PENDING order of the demo follower, for the calls
// that manage other people's orders.
func (fx *roleFixture) anyOrder(follower *roleViewer) string { return follower.order() }

func (v *roleViewer) donation() string {
	if v.userID == "" {
		return "none"
	}
	d, err := v.fx.ts.store.CreateDonation(context.Background(), store.NewDonation{AppID: v.fx.appID, UserID: v.userID, Amount: 500, Currency: "USD"})
	if err != nil {
		v.fx.t.Fatal(err)
	}
	return d.ID
}

// hidingRoutes answer 404 to a viewer who may not see what the request
// names (someone else's order), so no one learns it exists: a 404 counts as
// refused there.
var hidingRoutes = map[string]bool{
	"POST /apps/:app/manage/orders/:orderId":          true,
	"POST /apps/:app/orders/:orderId/refund":          true,
	"PUT /api/store/:storeId/orders/:orderId/status":  true,
	"POST /api/store/:storeId/orders/:orderId/refund": true,
}

// signInRoutes lead everyone to the sign-in page: that redirect is what
// they do, not a refusal.
var signInRoutes = map[string]bool{"GET /": true, "GET /apps/:app/signin": true, "GET /signin": true, "POST /apps/:app/signout": true}

// roleTable lists every route of both sites. fx supplies the ids.
func roleTable(fx *roleFixture, follower *roleViewer) []roleRoute {
	app := "/apps/demo"
	st := "/api/store/" + fx.storeID
	ev := "/api/events/" + fx.eventID
	msg := "/api/messages/" + fx.postID
	both := func(method, path, min string, req func(*roleViewer) (string, string)) []roleRoute {
		return []roleRoute{{"main", method, path, min, req}, {"auth", method, path, min, req}}
	}
	rows := []roleRoute{}
	rows = append(rows, both("GET", "/healthz", public, fixed("/healthz"))...)
	rows = append(rows, both("GET", "/readyz", public, fixed("/readyz"))...)
	// Answered to loopback scrapers or METRICS_TOKEN only (metrics.go):
	// the table's requests get 404, which is not a role refusal.
	rows = append(rows, roleRoute{"main", "GET", "/metrics", public, fixed("/metrics")})
	rows = append(rows, both("GET", "/static/*", public, fixed("/static/icon.svg"))...)
	rows = append(rows, both("GET", "/static/build/*", public, fixed("/static/build/manifest.json"))...)
	rows = append(rows, both("GET", "/manifest.webmanifest", public, fixed("/manifest.webmanifest"))...)
	rows = append(rows, both("GET", "/favicon.ico", public, fixed("/favicon.ico"))...)
	rows = append(rows, []roleRoute{
		// The auth site: signing in and up is for everyone.
		{"auth", "GET", "/", public, fixed("/")},
		{"auth", "GET", "/authenticate/signin", public, fixed("/authenticate/signin?app=demo")},
		{"auth", "POST", "/authenticate/signin", public, withBody("/authenticate/signin?app=demo", "email=nobody%40demo.test&password=")},
		{"auth", "GET", "/authenticate/signup", public, fixed("/authenticate/signup?app=demo")},
		// After the sign-up form: where the confirmation mail went.
		{"auth", "GET", "/authenticate/welcome", store.RoleAuthenticated, fixed("/authenticate/welcome?app=demo")},
		{"auth", "POST", "/authenticate/signup", public, withBody("/authenticate/signup?app=demo", "email=x&username=x&password=x")},
		// Password reset and verification links: for everyone (the token
		// is the authority); a new verification mail needs an account.
		{"auth", "GET", "/authenticate/forgot", public, fixed("/authenticate/forgot?app=demo")},
		{"auth", "POST", "/authenticate/forgot", public, withBody("/authenticate/forgot?app=demo", "email=nobody%40demo.test")},
		{"auth", "GET", "/authenticate/reset", public, fixed("/authenticate/reset?app=demo&token=nope")},
		{"auth", "POST", "/authenticate/reset", public, withBody("/authenticate/reset?app=demo", "token=nope&password=long-enough-password")},
		{"auth", "GET", "/authenticate/verify", public, fixed("/authenticate/verify?app=demo&token=nope")},
		{"auth", "POST", "/authenticate/verify/resend", store.RoleAuthenticated, fixed("/authenticate/verify/resend?app=demo")},
		{"auth", "GET", "/authenticate/email/undo", public, fixed("/authenticate/email/undo?app=demo&token=nope")},
		{"auth", "POST", "/authenticate/email/undo", public, withBody("/authenticate/email/undo?app=demo", "token=nope")},
		// Account settings: any signed-in user, for their own account.
		{"auth", "GET", "/authenticate/account", store.RoleAuthenticated, fixed("/authenticate/account?app=demo")},
		// Hands a sign-in to the app's custom domain (a visitor is sent to
		// the sign-in form).
		{"auth", "GET", "/authenticate/continue", public, fixed("/authenticate/continue?app=demo")},
		{"auth", "POST", "/authenticate/account/email", store.RoleAuthenticated, withBody("/authenticate/account/email?app=demo", "email=x&emailPassword=demo-password")},
		{"auth", "POST", "/authenticate/account/username", store.RoleAuthenticated, withBody("/authenticate/account/username?app=demo", "username=x")},
		{"auth", "POST", "/authenticate/account/password", store.RoleAuthenticated, withBody("/authenticate/account/password?app=demo", "currentPassword=x&newPassword=y")},
		{"auth", "POST", "/authenticate/account/export", store.RoleAuthenticated, fixed("/authenticate/account/export?app=demo")},
		{"auth", "GET", "/authenticate/account/export", store.RoleAuthenticated, fixed("/authenticate/account/export?app=demo&token=nope")},
		{"auth", "POST", "/authenticate/account/delete", store.RoleAuthenticated, withBody("/authenticate/account/delete?app=demo", "currentPassword=wrong")},
		// One-click unsubscribe: the token in the link is the authority.
		{"main", "GET", "/mail/unsubscribe/:token", public, fixed("/mail/unsubscribe/nope")},
		{"main", "POST", "/mail/unsubscribe/:token", public, withBody("/mail/unsubscribe/nope", "List-Unsubscribe=One-Click")},

		// Main site: files, media and pages anyone may open. A page whose
		// content depends on the role (the profile, create-post) is public
		// as a route: it shows a visitor the sign-in link instead.
		{"main", "GET", "/", public, fixed("/")},
		// Signed media URLs: the signature, not the session, decides.
		{"main", "GET", "/media/*", public, fixed(fx.signedGet)},
		{"main", "GET", "/media/i/:id/:variant", public, fixed("/media/i/none/original")},
		{"main", "GET", "/sw.js", public, fixed("/sw.js")},
		{"main", "GET", "/robots.txt", public, fixed("/robots.txt")},
		{"main", "GET", "/sitemap.xml", public, fixed("/sitemap.xml")},
		{"main", "GET", "/apps/:app/sitemap.xml", public, fixed(app + "/sitemap.xml")},
		{"main", "GET", "/apps/:app/feed.xml", public, fixed(app + "/feed.xml")},
		{"main", "GET", "/apps/:app/link-icons/:domain", public, fixed(app + "/link-icons/github.com")},
		{"main", "GET", "/apps", public, fixed("/apps")},
		{"main", "GET", "/apps/:app", public, fixed(app)},
		{"main", "GET", "/apps/:app/signin", public, fixed(app + "/signin")},
		{"main", "GET", "/apps/:app/manifest.webmanifest", public, fixed(app + "/manifest.webmanifest")},
		{"main", "GET", "/apps/:app/sw.js", public, fixed(app + "/sw.js")},
		{"main", "GET", "/apps/:app/icons/:file", public, fixed(app + "/icons/icon-192.png")},
		{"main", "GET", "/signin", public, fixed("/signin?app=demo")},
		{"main", "GET", "/apps/:app/profile", public, fixed(app + "/profile")},
		{"main", "GET", "/apps/:app/community", public, fixed(app + "/community")},
		{"main", "GET", "/apps/:app/posts/:postId", public, fixed(app + "/posts/" + fx.postID)},
		{"main", "GET", "/apps/:app/create-post", public, fixed(app + "/create-post")},
		{"main", "GET", "/apps/:app/create-story", public, fixed(app + "/create-story")},
		{"main", "GET", "/apps/:app/store", public, fixed(app + "/store")},
		{"main", "GET", "/apps/:app/store/items/:itemId", public, fixed(app + "/store/items/" + fx.itemID)},
		{"main", "GET", "/apps/:app/events", public, fixed(app + "/events")},
		{"main", "GET", "/apps/:app/events.ics", public, fixed(app + "/events.ics")},
		{"main", "GET", "/apps/:app/events/:eventId", public, fixed(app + "/events/" + fx.eventID)},
		{"main", "GET", "/apps/:app/events/:eventId/calendar.ics", public, fixed(app + "/events/" + fx.eventID + "/calendar.ics")},
		{"main", "GET", "/apps/:app/search", store.RoleAuthenticated, fixed(app + "/search?q=vinyl")},
		{"main", "GET", "/apps/:app/chat", public, fixed(app + "/chat")},
		{"main", "GET", "/apps/:app/donate", store.RoleAuthenticated, fixed(app + "/donate")},
		{"main", "GET", "/apps/:app/create-event", public, fixed(app + "/create-event")},
		{"main", "GET", "/apps/:app/checkout/plan/:itemId", store.RoleAuthenticated, fixed(app + "/checkout/plan/" + fx.planID)},
		// The tiers are public; joining needs an account.
		{"main", "GET", "/apps/:app/membership", public, fixed(app + "/membership")},
		// Only a member whose membership renews has something to change
		// (409 for the others): refused below a signed-in viewer.
		{"main", "GET", "/apps/:app/membership/change/:itemId", store.RoleAuthenticated, fixed(app + "/membership/change/" + fx.planID)},
		// Back from Stripe Checkout with a card trial's card: the viewer's own.
		{"main", "GET", "/apps/:app/membership/card-trial", store.RoleAuthenticated, fixed(app + "/membership/card-trial")},
		// PayPal's return from a tier change's approvals: the member's own
		// change only (404 for anyone else's).
		{"main", "GET", "/apps/:app/membership/paypal/:changeId", store.RoleAuthenticated, fixed(app + "/membership/paypal/none")},
		// The page a cancelled payment returns to shows nothing personal.
		{"main", "GET", "/apps/:app/cancel_order", public, fixed(app + "/cancel_order")},

		// Pages of a signed-in member.
		{"main", "GET", "/apps/:app/cart", store.RoleFollower, fixed(app + "/cart")},
		{"main", "GET", "/apps/:app/notifications", store.RoleFollower, fixed(app + "/notifications")},
		// Who gave what is for the creator and admins.
		{"main", "GET", "/apps/:app/donations", store.RoleAdmin, fixed(app + "/donations")},
		{"main", "GET", "/apps/:app/checkout", store.RoleFollower, fixed(app + "/checkout")},
		{"main", "GET", "/apps/:app/orders", store.RoleFollower, fixed(app + "/orders")},
		{"main", "GET", "/apps/:app/orders/:orderId", store.RoleFollower, func(v *roleViewer) (string, string) { return app + "/orders/" + v.order(), "" }},
		{"main", "GET", "/apps/:app/payment-success", store.RoleFollower, fixed(app + "/payment-success")},
		{"main", "GET", "/apps/:app/transactions", store.RoleFollower, fixed(app + "/transactions")},
		// Store management and fulfilment: creator and admins.
		{"main", "GET", "/apps/:app/store/items/new", store.RoleAdmin, fixed(app + "/store/items/new")},
		{"main", "GET", "/apps/:app/store/items/:itemId/edit", store.RoleAdmin, fixed(app + "/store/items/" + fx.itemID + "/edit")},
		{"main", "GET", "/apps/:app/manage/orders", store.RoleAdmin, fixed(app + "/manage/orders")},

		// Forms without JavaScript.
		{"main", "POST", "/apps/:app/cart/items", store.RoleFollower, withBody(app+"/cart/items", "storeItemId="+fx.itemID+"&quantity=1")},
		{"main", "POST", "/apps/:app/cart/items/:cartItemId", store.RoleFollower, func(v *roleViewer) (string, string) {
			return app + "/cart/items/" + v.cartLine(), "quantity=2"
		}},
		{"main", "POST", "/apps/:app/cart/clear", store.RoleFollower, withBody(app+"/cart/clear", "")},
		{"main", "POST", "/apps/:app/follow", store.RoleAuthenticated, withBody(app+"/follow", "")},
		// Only a FOLLOWER can unfollow (higher roles stay members, 403):
		// they aim at an app nobody follows, as the API's row does.
		{"main", "POST", "/apps/:app/unfollow", store.RoleAuthenticated, func(v *roleViewer) (string, string) {
			if store.RoleRank(v.role) > store.RoleRank(store.RoleFollower) {
				return "/apps/none/unfollow", "x=1"
			}
			return app + "/unfollow", "x=1"
		}},
		{"main", "POST", "/apps/:app/signout", public, withBody(app+"/signout", "")},
		{"main", "POST", "/apps/:app/profile/picture", store.RoleAuthenticated, withBody(app+"/profile/picture", "")},
		{"main", "POST", "/apps/:app/posts/:postId/like", store.RoleFollower, withBody(app+"/posts/"+fx.postID+"/like", "x=1")},
		{"main", "POST", "/apps/:app/posts/:postId/publish", store.RoleAdmin, func(*roleViewer) (string, string) { return app + "/posts/" + fx.newPost() + "/publish", "x=1" }},
		{"main", "POST", "/apps/:app/posts/:postId/comments", store.RoleFollower, withBody(app+"/posts/"+fx.postID+"/comments", "content=role+table")},
		{"main", "POST", "/apps/:app/create-post", store.RoleSubscriber, withBody(app+"/create-post", "content=role+table")},
		{"main", "POST", "/apps/:app/create-story", store.RoleSubscriber, withBody(app+"/create-story", "content=role+table")},
		{"main", "POST", "/apps/:app/store/items/new", store.RoleAdmin, withBody(app+"/store/items/new", "name=")},
		{"main", "POST", "/apps/:app/store/items/:itemId/edit", store.RoleAdmin, withBody(app+"/store/items/"+fx.itemID+"/edit", "name=")},
		// Without a file the form is sent back with why: those who may upload.
		{"main", "POST", "/apps/:app/store/items/:itemId/files", store.RoleAdmin, withBody(app+"/store/items/"+fx.itemID+"/files", "x=1")},
		// A link signed for the viewer to an order that grants nothing: 410
		// for any signed-in viewer; a visitor has no link of their own.
		{"main", "GET", "/apps/:app/downloads/:fileId", store.RoleAuthenticated, fx.downloadLink},
		{"main", "POST", "/apps/:app/notifications/read", store.RoleFollower, withBody(app+"/notifications/read", "")},
		{"main", "POST", "/apps/:app/notifications/settings", store.RoleFollower, withBody(app+"/notifications/settings", "")},
		{"main", "POST", "/apps/:app/checkout/plan/:itemId", store.RoleAuthenticated, withBody(app+"/checkout/plan/"+fx.planID, "paymentMethod=none")},
		{"main", "POST", "/apps/:app/profile/membership", store.RoleAuthenticated, withBody(app+"/profile/membership", "cancel=1")},
		{"main", "POST", "/apps/:app/membership/cancel", store.RoleAuthenticated, withBody(app+"/membership/cancel", "cancel=1")},
		{"main", "POST", "/apps/:app/membership/change/:itemId", store.RoleAuthenticated, withBody(app+"/membership/change/"+fx.planID, "x=1")},
		{"main", "POST", "/apps/:app/membership/portal", store.RoleAuthenticated, withBody(app+"/membership/portal", "x=1")},
		{"main", "POST", "/apps/:app/donate", store.RoleAuthenticated, withBody(app+"/donate", "amount=5")},
		{"main", "POST", "/apps/:app/checkout", store.RoleFollower, withBody(app+"/checkout", "")},
		{"main", "POST", "/apps/:app/checkout/shipping", store.RoleFollower, withBody(app+"/checkout/shipping", "")},
		{"main", "POST", "/apps/:app/checkout/pay", store.RoleFollower, withBody(app+"/checkout/pay", "")},
		{"main", "POST", "/apps/:app/wallet/topup", store.RoleFollower, withBody(app+"/wallet/topup", "amount=1000&method=stripe")},
		{"main", "GET", "/apps/:app/wallet/topup/return", store.RoleFollower, fixed(app + "/wallet/topup/return?topupId=none")},
		{"main", "POST", "/apps/:app/orders/:orderId/cancel", store.RoleFollower, func(v *roleViewer) (string, string) {
			return app + "/orders/" + v.order() + "/cancel", ""
		}},
		{"main", "POST", "/apps/:app/manage/orders/:orderId", store.RoleAdmin, func(v *roleViewer) (string, string) {
			return app + "/manage/orders/" + fx.anyOrder(follower), "status=PROCESSING"
		}},
		{"main", "POST", "/apps/:app/orders/:orderId/refund", store.RoleAdmin, func(v *roleViewer) (string, string) {
			return app + "/orders/" + fx.anyOrder(follower) + "/refund", "reason="
		}},
		{"main", "POST", "/apps/:app/events/:eventId/attend", store.RoleFollower, withBody(app+"/events/"+fx.eventID+"/attend", "action=join")},
		// The demo app lets only its creator create events.
		{"main", "POST", "/apps/:app/create-event", store.RoleCreator, withBody(app+"/create-event", "name=")},

		// Moderation: anyone signed in reports; moderators and up review;
		// the creator and admins set the rules.
		{"main", "GET", "/apps/:app/report", store.RoleAuthenticated, fixed(app + "/report?type=POST&id=" + fx.postID)},
		{"main", "POST", "/apps/:app/report", store.RoleAuthenticated, withBody(app+"/report", "targetType=POST&targetId="+fx.postID+"&reason=SPAM")},
		{"main", "GET", "/apps/:app/studio/moderation", store.RoleModerator, fixed(app + "/studio/moderation")},
		{"main", "POST", "/apps/:app/studio/moderation", store.RoleModerator, withBody(app+"/studio/moderation", "action=DISMISS&targetType=POST&targetId="+fx.postID)},
		{"main", "POST", "/apps/:app/studio/moderation/settings", store.RoleAdmin, withBody(app+"/studio/moderation/settings", "reportThreshold=3")},
		// Apps of one's own: any signed-in user (SELF_SERVE_APPS).
		{"main", "POST", "/apps", store.RoleAuthenticated, func(v *roleViewer) (string, string) {
			return "/apps", "name=rt-" + strings.ToLower(v.role) + "&displayName=Role+table"
		}},
		{"main", "GET", "/api/apps/availability", store.RoleAuthenticated, fixed("/api/apps/availability?name=free-name")},
		{"main", "POST", "/api/apps", store.RoleAuthenticated, func(v *roleViewer) (string, string) {
			return "/api/apps", `{"name":"rtj-` + strings.ToLower(v.role) + `"}`
		}},
		// The studio: creator and admins (access.CanOpenStudio). Forms that
		// would change what later rows rely on are sent invalid: an allowed
		// viewer gets the form back with its errors, the others a refusal.
		{"main", "GET", "/apps/:app/studio", store.RoleAdmin, fixed(app + "/studio")},
		// Launch (issue 43 item 1): the checklist, Publish (demo is
		// published: publishing again changes nothing) and the preview
		// switch (turned off: nothing changes for later rows).
		{"main", "GET", "/apps/:app/studio/launch", store.RoleAdmin, fixed(app + "/studio/launch")},
		{"main", "POST", "/apps/:app/studio/launch", store.RoleAdmin, withBody(app+"/studio/launch", "action=publish")},
		{"main", "POST", "/apps/:app/studio/preview", store.RoleAdmin, withBody(app+"/studio/preview", "mode=off")},
		{"main", "GET", "/apps/:app/studio/features", store.RoleAdmin, fixed(app + "/studio/features")},
		{"main", "GET", "/apps/:app/studio/plans", store.RoleAdmin, fixed(app + "/studio/plans")},
		{"main", "GET", "/apps/:app/studio/members", store.RoleAdmin, fixed(app + "/studio/members?q=demo")},
		{"main", "GET", "/apps/:app/studio/analytics", store.RoleAdmin, fixed(app + "/studio/analytics")},
		{"main", "GET", "/apps/:app/studio/export/:kind", store.RoleAdmin, fixed(app + "/studio/export/orders.csv")},
		// Payouts: the screen and statement for the studio; connecting,
		// onboarding and the Stripe dashboard for the creator alone (cards
		// are not configured here, which the creator is told on the screen).
		{"main", "GET", "/apps/:app/studio/payouts", store.RoleAdmin, fixed(app + "/studio/payouts")},
		{"main", "GET", "/apps/:app/studio/payouts/statement.csv", store.RoleAdmin, fixed(app + "/studio/payouts/statement.csv")},
		{"main", "POST", "/apps/:app/studio/payouts/connect", store.RoleCreator, withBody(app+"/studio/payouts/connect", "")},
		{"main", "GET", "/apps/:app/studio/payouts/refresh", store.RoleCreator, fixed(app + "/studio/payouts/refresh")},
		{"main", "GET", "/apps/:app/studio/payouts/return", store.RoleCreator, fixed(app + "/studio/payouts/return")},
		{"main", "POST", "/apps/:app/studio/payouts/dashboard", store.RoleCreator, withBody(app+"/studio/payouts/dashboard", "")},
		{"main", "POST", "/apps/:app/studio/profile", store.RoleAdmin, withBody(app+"/studio/profile", "displayName=Demo&lang=not+a+language&version=1.0.0")},
		{"main", "POST", "/apps/:app/studio/links", store.RoleAdmin, withBody(app+"/studio/links", "linkTitle=Bad&linkUrl=ftp%3A%2F%2Fx")},
		{"main", "POST", "/apps/:app/studio/images", store.RoleAdmin, withBody(app+"/studio/images", "which=logo")},
		{"main", "POST", "/apps/:app/studio/features", store.RoleAdmin, withBody(app+"/studio/features", "gating=sometimes")},
		{"main", "GET", "/apps/:app/studio/paypal", store.RoleAdmin, fixed(app + "/studio/paypal")},
		{"main", "POST", "/apps/:app/studio/paypal", store.RoleCreator, withBody(app+"/studio/paypal", "merchantId=bad")},
		{"main", "GET", "/apps/:app/studio/data", store.RoleCreator, fixed(app + "/studio/data")},
		{"main", "GET", "/apps/:app/studio/data/export", store.RoleCreator, fixed(app + "/studio/data/export?token=none")},
		{"main", "POST", "/apps/:app/studio/data/export", store.RoleCreator, withBody(app+"/studio/data/export", "")},
		{"main", "POST", "/apps/:app/studio/data/delete", store.RoleCreator, withBody(app+"/studio/data/delete", "confirm=not-the-name")},
		{"main", "GET", "/apps/:app/studio/shipping", store.RoleAdmin, fixed(app + "/studio/shipping")},
		// Custom domain (studio_domain.go): creator and admins.
		{"main", "GET", "/apps/:app/studio/domain", store.RoleAdmin, fixed(app + "/studio/domain")},
		{"main", "POST", "/apps/:app/studio/domain", store.RoleAdmin, withBody(app+"/studio/domain", "domain=")},
		{"main", "POST", "/apps/:app/studio/domain/check", store.RoleAdmin, withBody(app+"/studio/domain/check", "")},
		{"main", "POST", "/apps/:app/studio/domain/remove", store.RoleAdmin, withBody(app+"/studio/domain/remove", "")},
		// A custom domain's sign-in callback: the one-time code is the
		// authority (on the main site it answers 404 to everyone).
		{"main", "GET", "/apps/:app/auth/callback", public, fixed(app + "/auth/callback?code=nope")},
		{"main", "GET", "/apps/:app/authenticate/:page", public, fixed(app + "/authenticate/signin")},
		{"main", "GET", "/internal/domains/allowed", public, fixed("/internal/domains/allowed?domain=fans.example.test")},
		{"main", "POST", "/apps/:app/studio/shipping", store.RoleAdmin, withBody(app+"/studio/shipping", "name=&countries=US")},
		{"main", "POST", "/apps/:app/studio/shipping/:zoneId", store.RoleAdmin, withBody(app+"/studio/shipping/none", "name=&countries=US")},
		{"main", "POST", "/apps/:app/studio/shipping/:zoneId/delete", store.RoleAdmin, withBody(app+"/studio/shipping/none/delete", "")},
		{"main", "GET", "/apps/:app/studio/newsletter", store.RoleAdmin, fixed(app + "/studio/newsletter")},
		{"main", "POST", "/apps/:app/studio/newsletter", store.RoleAdmin, withBody(app+"/studio/newsletter", "replyTo=not-an-address&digestDay=1&digestHour=9")},
		{"main", "POST", "/apps/:app/studio/newsletter/test", store.RoleAdmin, withBody(app+"/studio/newsletter/test", "messageId=none")},
		{"main", "GET", "/apps/:app/studio/theme", store.RoleAdmin, fixed(app + "/studio/theme")},
		{"main", "POST", "/apps/:app/studio/icon", store.RoleAdmin, withBody(app+"/studio/icon", "file=none")},
		{"main", "GET", "/apps/:app/studio/theme/preview", store.RoleAdmin, fixed(app + "/studio/theme/preview?primaryColor=%230b6e4f")},
		{"main", "POST", "/apps/:app/studio/theme", store.RoleAdmin, withBody(app+"/studio/theme", "primaryColor=%23ffff00")},
		{"main", "POST", "/apps/:app/studio/plans", store.RoleAdmin, withBody(app+"/studio/plans", "name=No+cycle&price=5")},
		{"main", "POST", "/apps/:app/studio/plans/:itemId", store.RoleAdmin, withBody(app+"/studio/plans/"+fx.planID, "name=No+cycle&price=5")},
		{"main", "POST", "/apps/:app/studio/plans/:itemId/archive", store.RoleAdmin, func(v *roleViewer) (string, string) {
			return app + "/studio/plans/" + fx.newPlan() + "/archive", ""
		}},
		{"main", "POST", "/apps/:app/studio/plans/:itemId/state", store.RoleAdmin, func(v *roleViewer) (string, string) {
			return app + "/studio/plans/" + fx.newPlan() + "/state", "state=DRAFT"
		}},
		{"main", "POST", "/apps/:app/studio/plans/:itemId/move", store.RoleAdmin, withBody(app+"/studio/plans/"+fx.planID+"/move", "direction=down")},
		{"main", "POST", "/apps/:app/studio/members/:userId", store.RoleAdmin, func(v *roleViewer) (string, string) {
			return app + "/studio/members/" + follower.userID, "role=FOLLOWER"
		}},
		// Wallet credit is the creator's to give; the welcome credit is a setting.
		{"main", "POST", "/apps/:app/studio/members/:userId/credit", store.RoleCreator, func(v *roleViewer) (string, string) {
			return app + "/studio/members/" + follower.userID + "/credit", "amount=&key=role-table"
		}},
		{"main", "POST", "/apps/:app/studio/wallet", store.RoleAdmin, withBody(app+"/studio/wallet", "welcomeCredit=lots")},
		// A complimentary membership is the creator's to give and end.
		{"main", "POST", "/apps/:app/studio/members/:userId/gift", store.RoleCreator, func(v *roleViewer) (string, string) {
			return app + "/studio/members/" + follower.userID + "/gift", "tierId=none&months=1"
		}},
		{"main", "POST", "/api/studio/apps/:appId/members/:userId/gift", store.RoleCreator, func(v *roleViewer) (string, string) {
			return "/api/studio/apps/demo/members/" + follower.userID + "/gift", `{"tierId":"none","months":1}`
		}},
		{"main", "DELETE", "/api/studio/apps/:appId/members/:userId/gift", store.RoleCreator, fixed("/api/studio/apps/demo/members/" + follower.userID + "/gift")},
		// Offer codes are managed like tiers: creator and admins.
		{"main", "GET", "/apps/:app/studio/offers", store.RoleAdmin, fixed(app + "/studio/offers")},
		{"main", "POST", "/apps/:app/studio/offers", store.RoleAdmin, withBody(app+"/studio/offers", "code=x&kind=percent&value=many")},
		{"main", "POST", "/apps/:app/studio/offers/:offerId/active", store.RoleAdmin, withBody(app+"/studio/offers/none/active", "active=0")},
		{"main", "GET", "/api/studio/apps/:appId/offers", store.RoleAdmin, fixed("/api/studio/apps/demo/offers")},
		{"main", "POST", "/api/studio/apps/:appId/offers", store.RoleAdmin, withBody("/api/studio/apps/demo/offers", `{"code":"x","duration":"ONCE"}`)},
		{"main", "DELETE", "/api/studio/apps/:appId/offers/:offerId", store.RoleAdmin, fixed("/api/studio/apps/demo/offers/none")},
		{"main", "POST", "/api/studio/apps/:appId/members/:userId/credit", store.RoleCreator, func(v *roleViewer) (string, string) {
			return "/api/studio/apps/demo/members/" + follower.userID + "/credit", `{"amount":0,"idempotencyKey":"role-table"}`
		}},
		{"main", "GET", "/api/studio/apps/:appId/launch", store.RoleAdmin, fixed("/api/studio/apps/demo/launch")},
		{"main", "PUT", "/api/studio/apps/:appId/launch", store.RoleAdmin, withBody("/api/studio/apps/demo/launch", `{"published":true}`)},
		{"main", "GET", "/api/studio/apps/:appId/members", store.RoleAdmin, fixed("/api/studio/apps/demo/members?role=FOLLOWER")},
		{"main", "PUT", "/api/studio/apps/:appId/members/:userId", store.RoleAdmin, func(v *roleViewer) (string, string) {
			return "/api/studio/apps/demo/members/" + follower.userID, `{"role":"FOLLOWER"}`
		}},
		{"main", "DELETE", "/api/studio/apps/:appId/members/:userId", store.RoleAdmin, fixed("/api/studio/apps/demo/members/" + follower.userID)},
		{"main", "GET", "/api/studio/apps/:appId/analytics", store.RoleAdmin, fixed("/api/studio/apps/demo/analytics?bucket=week")},
		{"main", "GET", "/api/studio/apps/:appId/shipping-zones", store.RoleAdmin, fixed("/api/studio/apps/demo/shipping-zones")},
		{"main", "GET", "/api/studio/apps/:appId/domain", store.RoleAdmin, fixed("/api/studio/apps/demo/domain")},
		{"main", "PUT", "/api/studio/apps/:appId/domain", store.RoleAdmin, withBody("/api/studio/apps/demo/domain", `{"domain":""}`)},
		{"main", "POST", "/api/studio/apps/:appId/domain/check", store.RoleAdmin, fixed("/api/studio/apps/demo/domain/check")},
		{"main", "DELETE", "/api/studio/apps/:appId/domain", store.RoleAdmin, fixed("/api/studio/apps/demo/domain")},
		{"main", "POST", "/api/studio/apps/:appId/shipping-zones", store.RoleAdmin, withBody("/api/studio/apps/demo/shipping-zones", `{"name":"","countries":["US"]}`)},
		{"main", "PUT", "/api/studio/apps/:appId/shipping-zones/:zoneId", store.RoleAdmin, withBody("/api/studio/apps/demo/shipping-zones/none", `{"name":"","countries":["US"]}`)},
		{"main", "DELETE", "/api/studio/apps/:appId/shipping-zones/:zoneId", store.RoleAdmin, fixed("/api/studio/apps/demo/shipping-zones/none")},
		{"main", "GET", "/api/studio/apps/:appId/newsletter", store.RoleAdmin, fixed("/api/studio/apps/demo/newsletter")},
		{"main", "PUT", "/api/studio/apps/:appId/newsletter", store.RoleAdmin, withBody("/api/studio/apps/demo/newsletter", `{"replyTo":"not-an-address","digestDay":1,"digestHour":9}`)},
		{"main", "POST", "/api/studio/apps/:appId/newsletter/test", store.RoleAdmin, withBody("/api/studio/apps/demo/newsletter/test", `{"messageId":"none"}`)},
		{"main", "GET", "/api/studio/apps/:appId/theme", store.RoleAdmin, fixed("/api/studio/apps/demo/theme")},
		{"main", "PUT", "/api/studio/apps/:appId/theme", store.RoleAdmin, withBody("/api/studio/apps/demo/theme", `{"primaryColor":"#ffff00"}`)},

		// JSON API: accounts, following, notifications.
		{"main", "GET", "/api/app/:appId/landing", public, fixed("/api/app/demo/landing")},
		{"main", "GET", "/api/auth/me", store.RoleAuthenticated, fixed("/api/auth/me?appId=demo")},
		{"main", "POST", "/api/auth/logout", public, withBody("/api/auth/logout", "{}")},
		{"main", "POST", "/api/notifications/follow/:appId", store.RoleAuthenticated, withBody("/api/notifications/follow/demo", "{}")},
		{"main", "POST", "/api/notifications/unfollow/:appId", store.RoleAuthenticated, withBody("/api/notifications/unfollow/none", "{}")},
		{"main", "GET", "/api/notifications/unread/:appId", store.RoleFollower, fixed("/api/notifications/unread/demo")},
		{"main", "POST", "/api/notifications/read/:appId", store.RoleFollower, withBody("/api/notifications/read/demo", `{"markAll":true}`)},
		{"main", "GET", "/api/notifications/vapid-key", public, fixed("/api/notifications/vapid-key")},
		{"main", "POST", "/api/notifications/enable-push/:appId", store.RoleFollower, withBody("/api/notifications/enable-push/demo", pushBody("https://push.example/1"))},
		{"main", "GET", "/api/notifications/preferences/:appId", store.RoleFollower, fixed("/api/notifications/preferences/demo")},
		{"main", "PUT", "/api/notifications/preferences/:appId", store.RoleFollower, withBody("/api/notifications/preferences/demo", `{}`)},
		{"main", "GET", "/api/search/apps/:appId", store.RoleAuthenticated, fixed("/api/search/apps/demo?q=vinyl")},

		// Community, messages and media: reading is public, writing needs
		// the community's create permission (SUBSCRIBER in demo).
		{"main", "GET", "/api/community/:communityId/posts", public, fixed("/api/community/" + fx.communityID + "/posts")},
		{"main", "GET", "/api/community/:communityId/stories", public, fixed("/api/community/" + fx.communityID + "/stories")},
		{"main", "GET", "/api/messages", public, fixed("/api/messages?parentMessageId=" + fx.postID)},
		{"main", "POST", "/api/messages", store.RoleSubscriber, withBody("/api/messages", fmt.Sprintf(`{"content":"role table","type":"POST","communityId":%q}`, fx.communityID))},
		{"main", "GET", "/api/messages/:id", public, fixed(msg)},
		// Deleting someone else's post is for moderators and up.
		{"main", "DELETE", "/api/messages/:id", store.RoleModerator, func(*roleViewer) (string, string) { return "/api/messages/" + fx.newPost(), "" }},
		{"main", "POST", "/api/messages/:id/publish", store.RoleAdmin, func(*roleViewer) (string, string) { return "/api/messages/" + fx.newPost() + "/publish", "" }},
		{"main", "GET", "/api/messages/:id/replies", public, fixed(msg + "/replies")},
		{"main", "GET", "/api/messages/:id/reactions", public, fixed(msg + "/reactions")},
		{"main", "POST", "/api/messages/:id/reactions", store.RoleFollower, withBody(msg+"/reactions", `{"reaction":"heart"}`)},
		// Taking back one's own reaction stays possible after unfollowing.
		{"main", "DELETE", "/api/messages/:id/reactions/:reactionId", store.RoleAuthenticated, fixed(msg + "/reactions/none")},
		{"main", "POST", "/api/media", store.RoleFollower, withBody("/api/media", fmt.Sprintf(
			`{"name":"a.png","type":"IMAGE","size":100,"mimeType":"image/png","path":"media/a.png","appId":%q}`, fx.appID))},
		{"main", "GET", "/api/media/:id/content", public, fixed("/api/media/none/content")},
		{"main", "POST", "/api/auth/profile-picture", store.RoleAuthenticated, withBody("/api/auth/profile-picture", `{"mediaId":"none"}`)},
		// The presigned upload URL is the credential: its signature decides.
		{"main", "PUT", "/media-upload/*", public, withBody(fx.signedPut, "x")},

		// Store and cart: FOLLOWER and up; managing items: creator and admins.
		{"main", "GET", "/api/store/apps/:appId/store", store.RoleFollower, fixed("/api/store/apps/" + fx.appID + "/store")},
		{"main", "GET", "/api/store/:storeId/items", store.RoleFollower, fixed(st + "/items")},
		{"main", "POST", "/api/store/:storeId/items", store.RoleAdmin, withBody(st+"/items", `{"name":"Role table item","type":"DIGITAL","price":100}`)},
		{"main", "GET", "/api/store/items/:itemId", store.RoleFollower, fixed("/api/store/items/" + fx.itemID)},
		{"main", "PUT", "/api/store/items/:itemId", store.RoleAdmin, func(*roleViewer) (string, string) {
			id := fx.asCreator("POST", st+"/items", `{"name":"Role table item","type":"DIGITAL","price":100}`)
			return "/api/store/items/" + id, `{"name":"Renamed","type":"DIGITAL","price":100}`
		}},
		{"main", "DELETE", "/api/store/items/:itemId", store.RoleAdmin, func(*roleViewer) (string, string) {
			return "/api/store/items/" + fx.asCreator("POST", st+"/items", `{"name":"Role table item","type":"DIGITAL","price":100}`), ""
		}},
		// A DIGITAL item's resumable uploads: creator and admins.
		{"main", "POST", "/api/store/items/:itemId/uploads", store.RoleAdmin, withBody("/api/store/items/"+fx.itemID+"/uploads", `{"name":"role.pdf","size":1}`)},
		{"main", "GET", "/api/store/items/:itemId/uploads/:uploadId", store.RoleAdmin, func(*roleViewer) (string, string) { return fx.newUpload(), "" }},
		{"main", "PUT", "/api/store/items/:itemId/uploads/:uploadId/parts/:number", store.RoleAdmin, func(*roleViewer) (string, string) {
			return fx.newUpload() + "/parts/1", "x"
		}},
		{"main", "POST", "/api/store/items/:itemId/uploads/:uploadId/complete", store.RoleAdmin, func(*roleViewer) (string, string) {
			return fx.newUpload() + "/complete", ""
		}},
		{"main", "DELETE", "/api/store/items/:itemId/uploads/:uploadId", store.RoleAdmin, func(*roleViewer) (string, string) { return fx.newUpload(), "" }},
		{"main", "GET", "/api/store/:storeId/cart", store.RoleFollower, fixed(st + "/cart")},
		{"main", "DELETE", "/api/store/:storeId/cart", store.RoleFollower, fixed(st + "/cart")},
		{"main", "POST", "/api/store/:storeId/cart/items", store.RoleFollower, withBody(st+"/cart/items", fmt.Sprintf(`{"storeItemId":%q,"quantity":1}`, fx.itemID))},
		{"main", "PUT", "/api/store/:storeId/cart/items/:cartItemId", store.RoleFollower, func(v *roleViewer) (string, string) {
			return st + "/cart/items/" + v.cartLine(), `{"quantity":2}`
		}},
		{"main", "DELETE", "/api/store/:storeId/cart/items/:cartItemId", store.RoleFollower, func(v *roleViewer) (string, string) {
			return st + "/cart/items/" + v.cartLine(), ""
		}},

		// Memberships and donations.
		{"main", "POST", "/api/subscriptions/apps/:appId/subscribe", store.RoleAuthenticated, withBody("/api/subscriptions/apps/"+fx.appID+"/subscribe", fmt.Sprintf(`{"itemId":%q,"paymentMethod":"none"}`, fx.planID))},
		{"main", "POST", "/api/subscriptions/apps/:appId/cancel", store.RoleAuthenticated, withBody("/api/subscriptions/apps/"+fx.appID+"/cancel", `{}`)},
		{"main", "GET", "/api/memberships/apps/:appId/tiers", public, fixed("/api/memberships/apps/" + fx.appID + "/tiers")},
		{"main", "GET", "/api/memberships/apps/:appId/change/:itemId", store.RoleAuthenticated, fixed("/api/memberships/apps/" + fx.appID + "/change/" + fx.planID)},
		{"main", "POST", "/api/memberships/apps/:appId/portal", store.RoleAuthenticated, withBody("/api/memberships/apps/"+fx.appID+"/portal", `{}`)},
		{"main", "POST", "/api/memberships/apps/:appId/change", store.RoleAuthenticated, withBody("/api/memberships/apps/"+fx.appID+"/change", fmt.Sprintf(`{"itemId":%q}`, fx.planID))},
		{"main", "POST", "/api/donations/create", store.RoleAuthenticated, withBody("/api/donations/create", fmt.Sprintf(`{"appId":%q,"amount":500,"currency":"USD"}`, fx.appID))},
		{"main", "POST", "/api/donations/process", store.RoleAuthenticated, func(v *roleViewer) (string, string) {
			return "/api/donations/process", fmt.Sprintf(`{"donationId":%q}`, v.donation())
		}},
		{"main", "GET", "/api/donations/apps/:appId", store.RoleAdmin, fixed("/api/donations/apps/" + fx.appID)},

		// Checkout, payments and orders: the buyer's own (FOLLOWER and up);
		// fulfilment and refunds: creator and admins.
		{"main", "GET", "/api/store/:storeId/stripe-payments/config", store.RoleFollower, fixed(st + "/stripe-payments/config")},
		{"main", "POST", "/api/store/:storeId/orders/checkout", store.RoleFollower, withBody(st+"/orders/checkout", `{}`)},
		{"main", "POST", "/api/store/:storeId/musepay/process", store.RoleFollower, func(v *roleViewer) (string, string) {
			return st + "/musepay/process", fmt.Sprintf(`{"orderId":%q}`, v.order())
		}},
		{"main", "GET", "/api/store/:storeId/orders", store.RoleFollower, fixed(st + "/orders")},
		{"main", "GET", "/api/store/:storeId/orders/:orderId", store.RoleFollower, func(v *roleViewer) (string, string) { return st + "/orders/" + v.order(), "" }},
		{"main", "PUT", "/api/store/:storeId/orders/:orderId/shipping", store.RoleFollower, func(v *roleViewer) (string, string) {
			return st + "/orders/" + v.order() + "/shipping", `{"firstName":"A","lastName":"B","address":"1 Road","city":"C","state":"S","zipCode":"12345","country":"US"}`
		}},
		{"main", "POST", "/api/store/:storeId/orders/:orderId/cancel", store.RoleFollower, func(v *roleViewer) (string, string) {
			return st + "/orders/" + v.order() + "/cancel", `{}`
		}},
		{"main", "GET", "/api/store/:storeId/wallet", store.RoleFollower, fixed(st + "/wallet")},
		{"main", "POST", "/api/store/:storeId/wallet/topups", store.RoleFollower, withBody(st+"/wallet/topups", `{"amount":1000,"method":"stripe"}`)},
		{"main", "POST", "/api/store/:storeId/wallet/topups/:topupId/confirm", store.RoleFollower, withBody(st+"/wallet/topups/none/confirm", `{}`)},
		{"main", "GET", "/api/store/:storeId/manage/orders", store.RoleAdmin, fixed(st + "/manage/orders")},
		{"main", "PUT", "/api/store/:storeId/orders/:orderId/status", store.RoleAdmin, func(v *roleViewer) (string, string) {
			return st + "/orders/" + fx.anyOrder(follower) + "/status", `{"status":"PROCESSING"}`
		}},
		{"main", "POST", "/api/store/:storeId/orders/:orderId/refund", store.RoleAdmin, func(v *roleViewer) (string, string) {
			return st + "/orders/" + fx.anyOrder(follower) + "/refund", `{}`
		}},
		{"main", "POST", "/api/store/:storeId/stripe-payments/create-intent", store.RoleFollower, func(v *roleViewer) (string, string) {
			return st + "/stripe-payments/create-intent", fmt.Sprintf(`{"orderId":%q}`, v.order())
		}},
		{"main", "POST", "/api/store/:storeId/stripe-payments/confirm", store.RoleFollower, withBody(st+"/stripe-payments/confirm", `{"paymentIntentId":"pi_none"}`)},
		{"main", "POST", "/api/store/:storeId/stripe-payments/refund", store.RoleAdmin, withBody(st+"/stripe-payments/refund", `{"paymentIntentId":"pi_none"}`)},
		{"main", "POST", "/api/store/:storeId/paypal/create-order", store.RoleFollower, func(v *roleViewer) (string, string) {
			return st + "/paypal/create-order", fmt.Sprintf(`{"orderId":%q}`, v.order())
		}},
		{"main", "POST", "/api/store/:storeId/paypal/capture-order", store.RoleFollower, withBody(st+"/paypal/capture-order", `{"paypalOrderId":"none"}`)},
		// Webhooks are signature-checked, not session-checked.
		{"main", "POST", "/api/webhooks/stripe", public, withBody("/api/webhooks/stripe", `{}`)},
		{"main", "POST", "/api/webhooks/paypal", public, withBody("/api/webhooks/paypal", `{}`)},
		{"main", "POST", "/api/webhooks/stripe-connect", public, withBody("/api/webhooks/stripe-connect", `{}`)},

		// Events: every event call needs a signed-in viewer (SPEC.md
		// section 6); creating is the creator's in demo; editing and
		// deleting any event is for the creator and admins; managing
		// attendees for moderators and up (and the host).
		{"main", "GET", "/api/events/apps/:appId/events", store.RoleAuthenticated, fixed("/api/events/apps/" + fx.appID + "/events")},
		{"main", "POST", "/api/events/apps/:appId/events", store.RoleCreator, withBody("/api/events/apps/"+fx.appID+"/events", `{"name":""}`)},
		{"main", "GET", "/api/events/:id", store.RoleAuthenticated, fixed(ev)},
		{"main", "PUT", "/api/events/:id", store.RoleAdmin, withBody(ev, `{"location":"Studio B"}`)},
		{"main", "DELETE", "/api/events/:id", store.RoleAdmin, func(*roleViewer) (string, string) { return "/api/events/" + fx.newEvent(), "" }},
		{"main", "POST", "/api/events/:id/join", store.RoleFollower, withBody(ev+"/join", `{}`)},
		// The host cannot leave: the event is hosted by someone outside the table.
		{"main", "DELETE", "/api/events/:id/leave", store.RoleAuthenticated, fixed("/api/events/" + fx.otherHostEvent + "/leave")},
		{"main", "GET", "/api/events/:id/attendees", store.RoleAuthenticated, fixed(ev + "/attendees")},
		{"main", "PUT", "/api/events/:id/attendees/:userId", store.RoleModerator, func(*roleViewer) (string, string) {
			id := fx.newEvent()
			if r := fx.ts.do(fx.t, "POST", "/api/events/"+id+"/join", strings.NewReader("{}"), follower.headers()); r.Status != 200 && r.Status != 201 {
				fx.t.Fatalf("follower joins: %d %s", r.Status, r.Body)
			}
			return "/api/events/" + id + "/attendees/" + follower.userID, `{"role":"MODERATOR"}`
		}},
		// Moderation calls.
		{"main", "POST", "/api/reports", store.RoleAuthenticated, withBody("/api/reports", fmt.Sprintf(`{"appId":%q,"targetType":"POST","targetId":%q,"reason":"SPAM"}`, fx.appID, fx.postID))},
		{"main", "GET", "/api/moderation/apps/:appId", store.RoleModerator, fixed("/api/moderation/apps/" + fx.appID)},
		{"main", "POST", "/api/moderation/apps/:appId/actions", store.RoleModerator, withBody("/api/moderation/apps/"+fx.appID+"/actions", fmt.Sprintf(`{"action":"DISMISS","targetType":"POST","targetId":%q}`, fx.postID))},
		{"main", "PUT", "/api/moderation/apps/:appId/settings", store.RoleAdmin, withBody("/api/moderation/apps/"+fx.appID+"/settings", `{"reportThreshold":3,"holdNewAccountLinks":false}`)},
		{"main", "DELETE", "/api/events/:id/attendees/:userId", store.RoleModerator, func(*roleViewer) (string, string) {
			id := fx.newEvent()
			if r := fx.ts.do(fx.t, "POST", "/api/events/"+id+"/join", strings.NewReader("{}"), follower.headers()); r.Status != 200 && r.Status != 201 {
				fx.t.Fatalf("follower joins: %d %s", r.Status, r.Body)
			}
			return "/api/events/" + id + "/attendees/" + follower.userID, ""
		}},
	}...)
	// Last: it ends every other session of each viewer, the fixture's
	// creator session among them.
	rows = append(rows, roleRoute{"auth", "POST", "/authenticate/account/signout-others", store.RoleAuthenticated,
		fixed("/authenticate/account/signout-others?app=demo")})
	return rows
}

// routeKeys lists an Echo instance's routes as "METHOD path", leaving out
// Echo's own not-found entries.
func routeKeys(e *echo.Echo) []string {
	var keys []string
	for _, r := range e.Routes() {
		if r.Method == echo.RouteNotFound {
			continue
		}
		keys = append(keys, r.Method+" "+r.Path)
	}
	return keys
}

// doSite sends a request to the named site; ts.do picks the site by path,
// which sends the paths both sites share to the main one.
func (ts *testServer) doSite(t testing.TB, site, method, target string, body io.Reader, headers map[string]string) response {
	t.Helper()
	req := testRequest(method, target, body, headers)
	rec := httptest.NewRecorder()
	handler := ts.Main()
	if site == "auth" {
		handler = ts.Auth()
	}
	handler.ServeHTTP(rec, req)
	return response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.String()}
}

func (v *roleViewer) headers() map[string]string {
	if v.email == "" {
		return map[string]string{}
	}
	if v.token == "" {
		v.token = sessionFor(v.fx.t, v.fx.ts, v.email)
	}
	return withSession(v.token)
}

// refused reports whether an answer turns the viewer away: 401, 403, or a
// page that sends a visitor to sign in.
func refused(r response, route string) bool {
	switch {
	case r.Status == http.StatusUnauthorized, r.Status == http.StatusForbidden:
		return true
	case r.Status == http.StatusNotFound:
		return hidingRoutes[route]
	case r.Status >= 300 && r.Status < 400:
		loc := r.Header.Get("Location")
		if strings.Contains(loc, "/authenticate/signin") {
			return !signInRoutes[route]
		}
		// A form without JavaScript is sent back with why it was refused.
		u, err := url.Parse(loc)
		if err != nil {
			return false
		}
		// A store form sends a viewer who does not follow the app to the
		// store page, where the follow prompt is.
		storeForm := strings.Contains(route, "/cart") || strings.Contains(route, "/checkout") || strings.Contains(route, "/orders") || strings.Contains(route, "/wallet")
		if storeForm && strings.HasPrefix(u.Path, "/apps/") && strings.Count(u.Path, "/") == 3 && strings.HasSuffix(u.Path, "/store") {
			return true
		}
		msg := u.Query().Get("error")
		return accessRefusals[msg] || (hidingRoutes[route] && msg == msgOrderNotFound)
	}
	return false
}

// accessRefusals are the messages a form is sent back with when the viewer
// may not do what it asks (as opposed to what they typed being wrong).
var accessRefusals = map[string]bool{
	"Authentication required": true, msgFollowForStore: true, msgManageStore: true, msgFulfilOnly: true,
	gatedMessage: true, msgReviewOnly: true, msgRulesOnly: true,
}

// newRoleFixture makes the role table's fixture over the demo app of ts:
// its ids, a post, an event, an event hosted by someone else, signed media
// URLs, and one viewer per role (follower among them).
func newRoleFixture(t *testing.T, ts *testServer, db *bun.DB) (*roleFixture, []*roleViewer, *roleViewer) {
	t.Helper()
	ctx := context.Background()
	demo, err := ts.store.Landing(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	fx := &roleFixture{t: t, ts: ts, appID: demo.ID, storeID: demo.Store.ID, communityID: demo.Community.ID}
	fx.creator = withSession(sessionFor(t, ts, "creator@demo.test"), "Content-Type", "application/json")
	var items []store.StoreItem
	if err := db.NewSelect().Model(&items).Where("app_id = ? AND deleted_at IS NULL", demo.ID).Order("name").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		switch {
		case it.Type == store.ItemSubscription && fx.planID == "":
			fx.planID = it.ID
		case it.Type == store.ItemDigital && fx.itemID == "":
			fx.itemID = it.ID
		}
	}
	if fx.planID == "" || fx.itemID == "" {
		t.Fatalf("demo seed lacks a plan or a digital item: %+v", items)
	}
	fx.postID = fx.newPost()
	fx.eventID = fx.newEvent()
	host, err := ts.store.CreateUser(ctx, "host@role.test", "rolehost", "x")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(72 * time.Hour).UTC()
	other, err := ts.store.CreateEvent(ctx, demo.ID, host.ID, store.EventInput{Name: "Hosted elsewhere", Type: "MEETUP",
		StartDate: start, EndDate: start.Add(time.Hour), Settings: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	fx.otherHostEvent = other.ID
	get, _ := ts.files.PresignGet(ctx, "media/role-table.png", time.Hour)
	put, _ := ts.files.PresignPut(ctx, "media/role-table.png", "application/x-www-form-urlencoded", 1, time.Hour)
	fx.signedGet, fx.signedPut = strings.TrimPrefix(get, "http://main.test"), strings.TrimPrefix(put, "http://main.test")

	viewers := []*roleViewer{}
	var follower *roleViewer
	for _, ru := range roleUsers {
		v := &roleViewer{role: ru.role, email: ru.email, fx: fx}
		if ru.email != "" {
			v.userID = ts.userID(t, ru.email)
		}
		if ru.role == store.RoleFollower {
			follower = v
		}
		viewers = append(viewers, v)
	}
	return fx, viewers, follower
}

// TestRoleTable runs every row of the role table for every role of the demo
// app, and fails when a registered route has no row: a new route must say
// who may call it.
func TestRoleTable(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	ctx := context.Background()
	fx, viewers, follower := newRoleFixture(t, ts, db)
	rows := roleTable(fx, follower)
	// Rows that follow an app or join a plan change roles: every row starts
	// from the seed's roles.
	seeded := map[string]string{}
	for _, v := range viewers {
		if v.userID == "" {
			continue
		}
		role := "NONE"
		var m store.Membership
		if err := db.NewSelect().Model(&m).Where("app_id = ? AND user_id = ?", fx.appID, v.userID).Scan(ctx); err == nil {
			role = m.Role
		}
		seeded[v.userID] = role
	}
	// Only the roles a row changed are set back: setting all seven after
	// each of the table's two thousand requests was most of this test's
	// time, and each set also emptied the app's cached landing.
	ids := make([]string, 0, len(seeded))
	for id := range seeded {
		ids = append(ids, id)
	}
	restoreRoles := func() {
		var now []store.Membership
		if err := db.NewSelect().Model(&now).Where("app_id = ? AND user_id IN (?)", fx.appID, bun.List(ids)).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		current := map[string]string{}
		for _, m := range now {
			current[m.UserID] = m.Role
		}
		for id, role := range seeded {
			if got, ok := current[id]; got == role || (!ok && role == "NONE") {
				continue
			}
			if err := ts.store.SetMemberRole(ctx, fx.appID, id, role); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Every registered route has a row, and every row a registered route.
	registered := map[string]bool{}
	for _, site := range []struct {
		name   string
		routes []string
	}{{"main", routeKeys(ts.main)}, {"auth", routeKeys(ts.auth)}} {
		for _, k := range site.routes {
			registered[site.name+" "+k] = true
		}
	}
	listed := map[string]bool{}
	for _, r := range rows {
		k := r.site + " " + r.method + " " + r.path
		if listed[k] {
			t.Errorf("two rows for %s", k)
		}
		listed[k] = true
		if !registered[k] {
			t.Errorf("row for %s, which is not a registered route", k)
		}
	}
	var missing []string
	for k := range registered {
		if !listed[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	for _, k := range missing {
		t.Errorf("route %s has no row in the role table: say which roles may call it", k)
	}

	for _, row := range rows {
		for _, v := range viewers {
			target, body := row.req(v)
			h := v.headers()
			if body != "" {
				if strings.HasPrefix(body, "{") {
					h["Content-Type"] = "application/json"
				} else {
					h["Content-Type"] = "application/x-www-form-urlencoded"
				}
			}
			r := ts.doSite(t, row.site, row.method, target, strings.NewReader(body), h)
			restoreRoles()
			if row.path == "/api/auth/logout" || row.path == "/apps/:app/signout" {
				v.token = "" // that session has ended
			}
			allowed := store.RoleRank(v.role) >= store.RoleRank(row.min)
			name := fmt.Sprintf("%s %s %s as %s", row.site, row.method, row.path, v.role)
			key := row.method + " " + row.path
			if allowed && refused(r, key) {
				t.Errorf("%s: refused (%d %s), but the table lets %s and up in: %.200s", name, r.Status, r.Header.Get("Location"), row.min, r.Body)
			}
			if !allowed && !refused(r, key) {
				t.Errorf("%s: let in (%d %s), but only %s and up may call it: %.200s", name, r.Status, r.Header.Get("Location"), row.min, r.Body)
			}
			if r.Status >= 500 {
				t.Errorf("%s: %d %.200s", name, r.Status, r.Body)
			}
		}
	}
}
