// Package access answers every "may this viewer do X" question of the
// product in one place (SPEC.md section 6). Handlers ask it before they
// write; pages hand its flags to the browser, which never re-derives a rule
// from a list of roles.
package access

import (
	"time"

	"marquee/store"
)

// Roles are ranked (SPEC.md section 6); store.RoleRank holds the numbers.
const (
	Public        = store.RolePublic
	Authenticated = store.RoleAuthenticated
	Follower      = store.RoleFollower
	Subscriber    = store.RoleSubscriber
	Moderator     = store.RoleModerator
	Admin         = store.RoleAdmin
	Creator       = store.RoleCreator
)

// AtLeast reports whether role meets the required role. An empty or unknown
// requirement means CREATOR, the default create_permission.
func AtLeast(role, required string) bool {
	if required != Public && required != Authenticated && !store.IsMembershipRole(required) {
		required = Creator
	}
	return store.RoleRank(role) >= store.RoleRank(required)
}

func signedIn(role string) bool { return AtLeast(role, Authenticated) }

// Flags are the capability flags of SPEC.md section 3 (canPost,
// canCreateStories, canModerate, canManage, canAccessStore) plus the ones
// the pages need so that no island decides a rule by itself.
type Flags struct {
	CanPost          bool `json:"canPost"`
	CanCreateStories bool `json:"canCreateStories"`
	CanCreateEvents  bool `json:"canCreateEvents"`
	CanModerate      bool `json:"canModerate"`
	CanManage        bool `json:"canManage"`
	CanAccessStore   bool `json:"canAccessStore"`
	CanManageStore   bool `json:"canManageStore"`
	CanFeature       bool `json:"canFeature"`
	CanComment       bool `json:"canComment"`
	CanReact         bool `json:"canReact"`
	CanUpload        bool `json:"canUpload"`
	CanFollow        bool `json:"canFollow"`
	CanUnfollow      bool `json:"canUnfollow"`
	CanJoinEvents    bool `json:"canJoinEvents"`
	// Header buttons (SPEC.md section 2): Donate when donations are on and
	// the viewer is signed in, Notifications for members (FOLLOWER and up),
	// Search for anyone signed in.
	CanDonate        bool `json:"canDonate"`
	CanNotifications bool `json:"canNotifications"`
	CanSearch        bool `json:"canSearch"`
}

// For decides what a viewer with role may do in an app with settings.
func For(settings store.AppSettings, role string) Flags {
	f := settings.Features
	community := f.Community.Enabled
	communityRule := f.Community.Settings.ContentSettings.CreatePermission
	eventsRule := f.Events.Settings.ContentSettings.CreatePermission
	member := AtLeast(role, Follower)
	return Flags{
		CanPost:          signedIn(role) && community && AtLeast(role, communityRule),
		CanCreateStories: signedIn(role) && community && !f.Community.Settings.StoriesOff && AtLeast(role, communityRule),
		CanCreateEvents:  signedIn(role) && f.Events.Enabled && AtLeast(role, eventsRule),
		CanModerate:      AtLeast(role, Moderator),
		CanManage:        AtLeast(role, Admin),
		CanAccessStore:   f.Store.Enabled && member,
		CanManageStore:   f.Store.Enabled && AtLeast(role, Admin),
		CanFeature:       AtLeast(role, Admin),
		CanComment:       community && member && f.Community.Settings.AllowComments,
		CanReact:         community && member && f.Community.Settings.AllowReactions,
		CanUpload:        member,
		CanFollow:        signedIn(role) && !member,
		CanUnfollow:      CanUnfollow(role),
		CanJoinEvents:    f.Events.Enabled && member,
		CanDonate:        CanDonate(settings, role),
		CanNotifications: member,
		CanSearch:        signedIn(role),
	}
}

// CanDeleteMessage: the author, and moderators and above, may delete.
func CanDeleteMessage(role string, isAuthor bool) bool {
	return (isAuthor && signedIn(role)) || AtLeast(role, Moderator)
}

// CanFollowApp: any signed-in viewer may call follow; members keep their
// role (following twice changes nothing).
func CanFollowApp(role string) bool { return signedIn(role) }

// CanUnfollow decides who may drop their membership by unfollowing. Only a
// FOLLOWER may: the creator owns the app, and ADMIN, MODERATOR and SUBSCRIBER
// roles are granted by the creator or paid for, so silently deleting them on
// an unfollow click would lose something the user cannot get back alone.
func CanUnfollow(role string) bool { return role == Follower }

// SkipsSubscriptionGate: creators, admins and moderators always pass.
func SkipsSubscriptionGate(role string) bool { return AtLeast(role, Moderator) }

// CanRefundPayments: only the app's creator and admins give a buyer's money
// back (card and PayPal refunds). Moderators keep the community, not the
// till.
func CanRefundPayments(role string) bool { return AtLeast(role, Admin) }

// Gated reports whether the subscription gate of SPEC.md section 2 holds the
// viewer back: gating is enabled and either required or landingPageOnly, the
// viewer is not staff, and has no valid subscription. A SUBSCRIBER role alone
// is not enough: a subscriber is a member whose subscription is valid.
//
// settings.landingPageOnly means "the landing page is the only public part
// of the app": it turns the gate on like required does, and it also strips
// the landing page (and its JSON) of the content previews (recent posts,
// upcoming events, featured items) for gated viewers, who see the banner,
// bio, links and the plans. Without it a gated app's landing page keeps its
// previews as teasers.
func Gated(settings store.AppSettings, role string, hasValidSubscription bool) bool {
	g := settings.Features.SubscriptionGating
	return g.Enabled && (g.Settings.Required || g.Settings.LandingPageOnly) && !SkipsSubscriptionGate(role) && !hasValidSubscription
}

// CanSeeDonations: the creator and admins see who donated and the totals.
func CanSeeDonations(role string) bool { return AtLeast(role, Admin) }

// CanDonate: any signed-in viewer of an app with donations on may donate
// (the header's Donate button, SPEC.md section 2).
func CanDonate(settings store.AppSettings, role string) bool {
	return signedIn(role) && settings.Features.Donations.Enabled
}

// CanSubscribe: signing in is the only requirement to buy a plan; staff may
// buy one too (it never lowers their role).
func CanSubscribe(role string) bool { return signedIn(role) }

// CanEditEvent: the event's host, and creators and admins, may edit or
// delete it (SPEC.md section 6).
func CanEditEvent(role string, isHost bool) bool {
	return (isHost && signedIn(role)) || AtLeast(role, Admin)
}

// CanManageAttendees: the event's host and moderators, and the app's
// moderators and above, manage who attends.
func CanManageAttendees(role string, attendeeRole string) bool {
	return attendeeRole == "HOST" || attendeeRole == "MODERATOR" || AtLeast(role, Moderator)
}

// MakesOfficialEvents: events created by the app's creator and admins are
// its official ones (the "official only" filter of SPEC.md section 2).
func MakesOfficialEvents(role string) bool { return AtLeast(role, Admin) }

// CanLeaveEvent: attendees and event moderators may leave; the host may
// not, since an event without its host has nobody to run it.
func CanLeaveEvent(attendeeRole string) bool {
	return attendeeRole == store.AttendeeAttendee || attendeeRole == store.AttendeeModerator
}

// CanSetAttendeeRole: only ATTENDEE <-> MODERATOR moves (SPEC.md section 4);
// the host's row is never changed or removed by anyone.
func CanSetAttendeeRole(targetRole, newRole string) bool {
	return CanLeaveEvent(targetRole) && (newRole == store.AttendeeAttendee || newRole == store.AttendeeModerator)
}

// CanRemoveAttendee: any attendee but the host may be removed.
func CanRemoveAttendee(targetRole string) bool { return CanLeaveEvent(targetRole) }

// AnnouncesToMembers: a new post or event by the app's creator or admins
// notifies every member; anyone else's would be noise to thousands of people.
func AnnouncesToMembers(role string) bool { return AtLeast(role, Admin) }

// CanSchedulePosts: the creator and admins save posts as drafts, schedule
// them and publish them later (they are never held for approval, and their
// posts are announced to the members).
func CanSchedulePosts(role string) bool { return AnnouncesToMembers(role) }

// CanSendNewsletter: the creator and admins mail a post to the app's
// members, and see and set the app's newsletter.
func CanSendNewsletter(role string) bool { return AtLeast(role, Admin) }

// CanFulfilOrders: the app's creator and admins, who run the store, see
// every order and move it through fulfilment (processing, shipped,
// delivered, cancel, refund).
func CanFulfilOrders(f Flags) bool { return f.CanManageStore }

// CanCancelOrder: a buyer may cancel their own unpaid order; those who
// fulfil orders may cancel any unpaid one. Whether the order is still
// unpaid is the status machine's question, not this one.
func CanCancelOrder(f Flags, isBuyer bool) bool {
	return (isBuyer && f.CanAccessStore) || CanFulfilOrders(f)
}

// CanOpenStudio: the creator studio (/apps/{app}/studio) is for the app's
// creator and admins. Moderators have no studio section yet: what they
// moderate (posts, comments, attendees) stays on the member screens.
func CanOpenStudio(role string) bool { return AtLeast(role, Admin) }

// SeesUnpublished: an unpublished app (issue 43 item 1) answers to its
// staff alone, the creator, admins and moderators; to anyone else it is
// not there.
func SeesUnpublished(role string) bool { return AtLeast(role, Moderator) }

// CanPublish: the creator and admins publish the app, unpublish it and
// preview it as a visitor or a member (the launch checklist, a studio
// screen).
func CanPublish(role string) bool { return CanOpenStudio(role) }

// GrantableRoles are the roles actor may give a member: never CREATOR (an
// app has one, its maker), never SUBSCRIBER (bought, not granted), and only
// roles below the actor's own, so an admin cannot make another admin.
func GrantableRoles(actor string) []string {
	out := []string{}
	for _, r := range []string{Admin, Moderator, Follower} {
		if store.RoleRank(r) < store.RoleRank(actor) && CanOpenStudio(actor) {
			out = append(out, r)
		}
	}
	return out
}

// CanChangeRole: the actor outranks the member's current role and may grant
// the new one; "NONE" (removing the member) needs only the first.
func CanChangeRole(actor, current, next string) bool {
	if !CanOpenStudio(actor) || current == Creator || store.RoleRank(current) >= store.RoleRank(actor) {
		return false
	}
	if next == "NONE" {
		return true
	}
	for _, r := range GrantableRoles(actor) {
		if r == next {
			return true
		}
	}
	return false
}

// CanCreateApp: any signed-in user may create an app when self-serve is on.
func CanCreateApp(signedIn, selfServe bool) bool { return signedIn && selfServe }

// CanReport: anyone signed in may report a post, comment, story, event or
// member of an app (issue 26); a member reports a target once.
func CanReport(role string) bool { return signedIn(role) }

// CanReview: moderators, admins and the creator work the review queue
// (dismiss, hide, delete, warn, ban) and read the audit log.
func CanReview(role string) bool { return AtLeast(role, Moderator) }

// CanSetModerationRules: the creator and admins set the report threshold
// and the limits for new accounts.
func CanSetModerationRules(role string) bool { return AtLeast(role, Admin) }

// CanBan: a reviewer bans or silences only members ranked below them, so a
// moderator cannot ban an admin and nobody bans the creator.
func CanBan(actorRole, targetRole string) bool {
	return CanReview(actorRole) && store.RoleRank(actorRole) > store.RoleRank(targetRole)
}

// SeesHidden: who sees hidden content besides its author.
func SeesHidden(role string) bool { return CanReview(role) }

// Restricted reports whether a ban or silence of kind stops a write (route
// as Echo registers it, "POST /api/messages"). A banned member may only
// undo things (unfollow, leave, take back a reaction, cancel, delete their
// own post) and report; a silenced member may read, follow, join and buy,
// but not write, react or create.
func Restricted(kind, route string) bool {
	switch kind {
	case store.BanKindBan:
		return !banAllows[route]
	case store.BanKindSilence:
		return silenceRefuses[route]
	}
	return false
}

var banAllows = map[string]bool{
	"POST /apps/:app/unfollow":                        true,
	"POST /apps/:app/signout":                         true,
	"POST /apps/:app/profile/picture":                 true,
	"POST /api/auth/logout":                           true,
	"POST /api/notifications/unfollow/:appId":         true,
	"POST /api/notifications/read/:appId":             true,
	"PUT /api/notifications/preferences/:appId":       true,
	"POST /apps/:app/notifications/read":              true,
	"POST /apps/:app/notifications/settings":          true,
	"DELETE /api/events/:id/leave":                    true,
	"DELETE /api/messages/:id":                        true,
	"DELETE /api/messages/:id/reactions/:reactionId":  true,
	"POST /api/subscriptions/apps/:appId/cancel":      true,
	"POST /apps/:app/profile/membership":              true,
	"POST /api/store/:storeId/orders/:orderId/cancel": true,
	"POST /apps/:app/orders/:orderId/cancel":          true,
	"POST /api/reports":                               true,
	"POST /apps/:app/report":                          true,
}

var silenceRefuses = map[string]bool{
	"POST /apps/:app/create-post":              true,
	"POST /apps/:app/create-story":             true,
	"POST /apps/:app/posts/:postId/like":       true,
	"POST /apps/:app/posts/:postId/comments":   true,
	"POST /apps/:app/store/items/new":          true,
	"POST /apps/:app/store/items/:itemId/edit": true,
	"POST /api/messages":                       true,
	"POST /api/messages/:id/reactions":         true,
	"POST /api/media":                          true,
	"POST /api/events/apps/:appId/events":      true,
	"PUT /api/events/:id":                      true,
	"POST /apps/:app/create-event":             true,
	"POST /api/store/:storeId/items":           true,
	"PUT /api/store/items/:itemId":             true,
	// Staff who are silenced are held too (issue 41 item 8): no rewriting
	// the app's public profile, no changing members' roles, no moderating.
	"POST /apps/:app/studio/profile":                 true,
	"POST /apps/:app/studio/links":                   true,
	"POST /apps/:app/studio/images":                  true,
	"POST /apps/:app/studio/members/:userId":         true,
	"PUT /api/studio/apps/:appId/members/:userId":    true,
	"DELETE /api/studio/apps/:appId/members/:userId": true,
	"PUT /api/events/:id/attendees/:userId":          true,
	"POST /apps/:app/studio/moderation":              true,
	"POST /api/moderation/apps/:appId/actions":       true,
}

// Restrict turns off what a ban or silence of kind takes away, so pages
// never offer it.
func Restrict(f Flags, kind string) Flags {
	switch kind {
	case store.BanKindBan:
		f.CanPost, f.CanCreateStories, f.CanCreateEvents, f.CanComment, f.CanReact = false, false, false, false, false
		f.CanUpload, f.CanFollow, f.CanJoinEvents, f.CanAccessStore, f.CanDonate = false, false, false, false, false
	case store.BanKindSilence:
		f.CanPost, f.CanCreateStories, f.CanCreateEvents, f.CanComment, f.CanReact, f.CanUpload = false, false, false, false, false, false
	}
	return f
}

// NewAccountAge is how young an account is "new" for the hold on links.
const NewAccountAge = 24 * time.Hour

// HoldsForApproval: with the app's hold on, a post with links from an
// account younger than a day, or without a verified e-mail, waits for a
// moderator; moderators and up are never held.
func HoldsForApproval(m store.ModerationSettings, role string, createdAt time.Time, verified bool, now time.Time, isPost, hasLink bool) bool {
	if !m.HoldNewAccountLinks || !isPost || !hasLink || CanReview(role) {
		return false
	}
	return now.Sub(createdAt) < NewAccountAge || !verified
}
