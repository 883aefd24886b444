package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"marquee/server/access"
	"marquee/store"
)

// roleUsers are the demo accounts holding each role in the demo app (SPEC.md
// section 6). None of them is a member of acme except admin@demo.test, who
// follows it: one person, different roles per app.
var roleUsers = []struct{ role, email string }{
	{store.RolePublic, ""},
	{store.RoleAuthenticated, "member@demo.test"},
	{store.RoleFollower, "follower@demo.test"},
	{store.RoleSubscriber, "subscriber@demo.test"},
	{store.RoleModerator, "moderator@demo.test"},
	{store.RoleAdmin, "admin@demo.test"},
	{store.RoleCreator, "creator@demo.test"},
}

// roleIn is the role the viewer holds in app: their demo role in demo,
// AUTHENTICATED in acme (FOLLOWER for admin@demo.test).
func roleIn(role, app string) string {
	if app == "demo" || role == store.RolePublic {
		return role
	}
	if role == store.RoleAdmin {
		return store.RoleFollower
	}
	return store.RoleAuthenticated
}

// TestRolesAcrossApps runs the community and account calls for every role
// in its own app (demo) and in another (acme): the status each must get, and
// for the app-scoped me call the role and permissions, so a member of one app
// provably has no rights in another. Which roles may call each registered
// route at all is TestRoleTable (role_table_test.go), built from the routes
// themselves.
func TestRolesAcrossApps(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	ctx := context.Background()
	communities, posts := map[string]string{}, map[string]string{}
	for _, name := range []string{"demo", "acme"} {
		app, err := ts.store.AppByIDOrName(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		com, err := ts.store.CommunityOfApp(ctx, app.ID)
		if err != nil {
			t.Fatal(err)
		}
		communities[name] = com.ID
		// A post in each app (acme's seed has none: its creator writes one).
		var msg store.Message
		err = db.NewSelect().Model(&msg).Where("community_id = ? AND type = ?", com.ID, store.MessagePost).Limit(1).Scan(ctx)
		if err != nil {
			msg = store.Message{ID: store.NewID(), AppID: app.ID, CommunityID: com.ID, SenderID: app.CreatorID,
				Type: store.MessagePost, Content: "Hello from " + name}
			if _, err := db.NewInsert().Model(&msg).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		posts[name] = msg.ID
	}
	other := map[string]string{"demo": "acme", "acme": "demo"}

	for _, ru := range roleUsers {
		headers := map[string]string{"Content-Type": "application/json"}
		if ru.email != "" {
			headers = withSession(sessionFor(t, ts, ru.email), "Content-Type", "application/json")
		}
		signedIn := ru.email != ""
		for _, app := range []string{"demo", "acme"} {
			role := roleIn(ru.role, app)
			rank := store.RoleRank(role)
			// Settings of the seed: demo lets SUBSCRIBER and up post and has
			// its store on; acme keeps the default (CREATOR) and its store off.
			canPost := (app == "demo" && rank >= store.RoleRank(store.RoleSubscriber)) || role == store.RoleCreator
			canStore := app == "demo" && rank >= store.RoleRank(store.RoleFollower)
			authed := func(ok int) int {
				if !signedIn {
					return http.StatusUnauthorized
				}
				return ok
			}
			post := http.StatusForbidden
			if canPost {
				post = http.StatusCreated
			}
			// Reacting needs a membership in the post's app (issue 4's rule).
			react := http.StatusForbidden
			if rank >= store.RoleRank(store.RoleFollower) {
				react = http.StatusCreated
			}
			followRole := role
			if rank < store.RoleRank(store.RoleFollower) {
				followRole = store.RoleFollower
			}
			// Only a FOLLOWER may leave by unfollowing (after following, a
			// visitor-level viewer is one); higher roles are refused.
			unfollow := map[string]int{
				store.RoleFollower: http.StatusOK, store.RoleSubscriber: http.StatusForbidden,
				store.RoleModerator: http.StatusForbidden, store.RoleAdmin: http.StatusForbidden,
				store.RoleCreator: http.StatusForbidden,
			}[followRole]
			cid := communities[app]
			rows := []struct {
				method, target, body string
				status               int
			}{
				{"GET", "/apps/" + app, "", http.StatusOK},
				{"GET", "/apps/" + app + "/profile", "", http.StatusOK},
				{"GET", "/apps/" + app + "/community", "", http.StatusOK},
				{"GET", "/apps/" + app + "/create-post", "", http.StatusOK},
				{"GET", "/apps/" + app + "/create-story", "", http.StatusOK},
				{"GET", "/apps/" + app + "/signin", "", http.StatusFound},
				{"GET", "/api/app/" + app + "/landing", "", http.StatusOK},
				{"GET", "/api/auth/me", "", authed(http.StatusOK)},
				{"GET", "/api/auth/me?appId=" + app, "", authed(http.StatusOK)},
				{"GET", "/api/community/" + cid + "/posts", "", http.StatusOK},
				{"GET", "/api/community/" + cid + "/stories", "", http.StatusOK},
				{"GET", "/api/messages?parentMessageId=none", "", http.StatusNotFound},
				{"GET", "/apps/" + app + "/posts/" + posts[app], "", http.StatusOK},
				// Another app's post is not found through this app.
				{"GET", "/apps/" + app + "/posts/" + posts[other[app]], "", http.StatusNotFound},
				{"GET", "/api/messages/" + posts[app], "", http.StatusOK},
				{"GET", "/api/messages/" + posts[app] + "/replies", "", http.StatusOK},
				{"GET", "/api/messages/" + posts[app] + "/reactions", "", http.StatusOK},
				{"POST", "/api/messages/" + posts[app] + "/reactions", `{"reaction":"heart"}`, authed(react)},
				{"POST", "/api/messages", fmt.Sprintf(`{"content":"hello from %s","type":"POST","communityId":%q}`, ru.role, cid), authed(post)},
				{"POST", "/api/notifications/follow/" + app, "{}", authed(http.StatusOK)},
				{"POST", "/api/notifications/unfollow/" + app, "{}", authed(unfollow)},
			}
			for _, row := range rows {
				name := fmt.Sprintf("%s %s %s", ru.role, row.method, row.target)
				var body *strings.Reader
				if row.body != "" {
					body = strings.NewReader(row.body)
				} else {
					body = strings.NewReader("")
				}
				res := ts.do(t, row.method, row.target, body, headers)
				if res.Status != row.status {
					t.Errorf("%s: status %d, want %d: %.200s", name, res.Status, row.status, res.Body)
					continue
				}
				switch {
				case strings.HasPrefix(row.target, "/api/auth/me?") && signedIn:
					var me struct {
						Data struct {
							UserAppRole     string
							UserPermissions access.Flags
							UserMembership  *store.Membership
							Subscription    struct {
								Items  []map[string]any
								Status struct{ HasValidSubscription bool }
							}
						}
					}
					if err := json.Unmarshal([]byte(res.Body), &me); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					p := me.Data.UserPermissions
					if me.Data.UserAppRole != role || p.CanAccessStore != canStore || p.CanPost != canPost ||
						p.CanModerate != (rank >= 5) || p.CanManage != (rank >= 6) || (me.Data.UserMembership != nil) != (rank >= 3) {
						t.Errorf("%s: role %s perms %+v membership %v; want role %s store %v post %v",
							name, me.Data.UserAppRole, p, me.Data.UserMembership, role, canStore, canPost)
					}
					wantSub := app == "demo" && ru.role == store.RoleSubscriber
					if me.Data.Subscription.Status.HasValidSubscription != wantSub {
						t.Errorf("%s: hasValidSubscription %v", name, me.Data.Subscription.Status.HasValidSubscription)
					}
				case strings.Contains(row.target, "/follow/") && signedIn:
					if !strings.Contains(res.Body, `"role":"`+followRole+`"`) {
						t.Errorf("%s: want role %s: %s", name, followRole, res.Body)
					}
				case strings.HasPrefix(row.target, "/apps/") && strings.HasSuffix(row.target, "/profile"):
					if ru.role == store.RoleCreator && app == "demo" && !strings.Contains(res.Body, "Creator of Demo Studio") {
						t.Errorf("%s: creator badge missing", name)
					}
					if ru.role == store.RoleCreator && app == "acme" && strings.Contains(res.Body, "Creator of") {
						t.Errorf("%s: creator badge in another app", name)
					}
					if !signedIn && !strings.Contains(res.Body, "/authenticate/signin?app="+app) {
						t.Errorf("%s: visitor lacks the sign-in link", name)
					}
				}
			}
			// Following, then unfollowing, left every membership as it was,
			// except that a demo FOLLOWER has now left: restore it.
			if signedIn && role == store.RoleFollower {
				u, _ := ts.store.UserByEmail(ctx, ru.email)
				a, _ := ts.store.AppByIDOrName(ctx, app)
				if err := ts.store.SetMemberRole(ctx, a.ID, u.ID, store.RoleFollower); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// Header buttons by role (SPEC.md section 2), decided in store/roles.go.
	for _, ru := range roleUsers {
		var h map[string]string
		if ru.email != "" {
			h = withSession(sessionFor(t, ts, ru.email))
		}
		body := ts.do(t, "GET", "/apps/demo", nil, h).Body
		has := strings.Contains(body, `data-island="HeaderActions"`)
		if has != (ru.email != "") {
			t.Errorf("%s: header actions shown %v", ru.role, has)
		}
		notifications := strings.Contains(body, `aria-label="Notifications"`)
		if notifications != (store.RoleRank(ru.role) >= 3) {
			t.Errorf("%s: notifications button %v", ru.role, notifications)
		}
	}
}
