package store

// Roles in rank order (SPEC.md section 6). Every permission in the product is
// decided by the functions in this file.
const (
	RolePublic        = "PUBLIC"
	RoleAuthenticated = "AUTHENTICATED"
	RoleFollower      = "FOLLOWER"
	RoleSubscriber    = "SUBSCRIBER"
	RoleModerator     = "MODERATOR"
	RoleAdmin         = "ADMIN"
	RoleCreator       = "CREATOR"
)

var roleRanks = map[string]int{
	RolePublic: 1, RoleAuthenticated: 2, RoleFollower: 3, RoleSubscriber: 4,
	RoleModerator: 5, RoleAdmin: 6, RoleCreator: 7,
}

// RoleRank returns the rank of a role; unknown roles rank as PUBLIC.
func RoleRank(role string) int {
	if r, ok := roleRanks[role]; ok {
		return r
	}
	return 1
}

// MembershipRoles are the roles a membership row may hold.
var MembershipRoles = []string{RoleCreator, RoleAdmin, RoleModerator, RoleSubscriber, RoleFollower}

func IsMembershipRole(role string) bool {
	for _, r := range MembershipRoles {
		if r == role {
			return true
		}
	}
	return false
}

// AtLeast reports whether role meets the required role. An empty or unknown
// requirement means CREATOR, the default create_permission.
func AtLeast(role, required string) bool {
	if _, ok := roleRanks[required]; !ok {
		required = RoleCreator
	}
	return RoleRank(role) >= RoleRank(required)
}

// Permissions are the capability flags of SPEC.md section 3, plus the event
// creation flag the Create menu needs.
type Permissions struct {
	CanPost          bool `json:"canPost"`
	CanCreateStories bool `json:"canCreateStories"`
	CanCreateEvents  bool `json:"canCreateEvents"`
	CanModerate      bool `json:"canModerate"`
	CanManage        bool `json:"canManage"`
	CanAccessStore   bool `json:"canAccessStore"`
	CanFeature       bool `json:"canFeature"`
	// Header buttons (SPEC.md section 2): Donate when donations are on and
	// the viewer is signed in, Notifications for members (FOLLOWER and up),
	// Search for anyone signed in.
	CanDonate        bool `json:"canDonate"`
	CanNotifications bool `json:"canNotifications"`
	CanSearch        bool `json:"canSearch"`
}

// PermissionsFor decides what a viewer with role may do in app.
func PermissionsFor(settings AppSettings, role string) Permissions {
	f := settings.Features
	communityRule := f.Community.Settings.ContentSettings.CreatePermission
	eventsRule := f.Events.Settings.ContentSettings.CreatePermission
	signedIn := RoleRank(role) >= RoleRank(RoleAuthenticated)
	return Permissions{
		CanPost:          signedIn && f.Community.Enabled && AtLeast(role, communityRule),
		CanCreateStories: signedIn && f.Community.Enabled && AtLeast(role, communityRule),
		CanCreateEvents:  signedIn && f.Events.Enabled && AtLeast(role, eventsRule),
		CanModerate:      AtLeast(role, RoleModerator),
		CanManage:        AtLeast(role, RoleAdmin),
		CanAccessStore:   f.Store.Enabled && AtLeast(role, RoleFollower),
		CanFeature:       AtLeast(role, RoleAdmin),
		CanDonate:        signedIn && f.Donations.Enabled,
		CanNotifications: AtLeast(role, RoleFollower),
		CanSearch:        signedIn,
	}
}

// SkipsSubscriptionGate: creators, admins and moderators always pass.
func SkipsSubscriptionGate(role string) bool {
	return AtLeast(role, RoleModerator)
}

// CanComment: replying and reacting need membership (FOLLOWER and up), so a
// signed-in non-member is refused with 403 and a visitor with 401.
func CanComment(role string) bool {
	return AtLeast(role, RoleFollower)
}

// CanDeleteMessage: the author, and moderators and above, may delete.
func CanDeleteMessage(role string, isAuthor bool) bool {
	return isAuthor || AtLeast(role, RoleModerator)
}

// CanUploadAppMedia: app files may be uploaded by members only.
func CanUploadAppMedia(role string) bool {
	return AtLeast(role, RoleFollower)
}

// Gated reports whether the subscription gate of SPEC.md section 2 holds the
// viewer back: gating is enabled and required, the viewer is not staff, and
// has no valid subscription. A SUBSCRIBER role alone is not enough: a
// subscriber is a member whose subscription is valid.
func Gated(settings AppSettings, role string, hasValidSubscription bool) bool {
	g := settings.Features.SubscriptionGating
	return g.Enabled && g.Settings.Required && !SkipsSubscriptionGate(role) && !hasValidSubscription
}

// CanFollow: any signed-in viewer may follow (SPEC.md section 6).
func CanFollow(role string) bool { return AtLeast(role, RoleAuthenticated) }

// FollowKeeps reports whether following leaves the current membership as it
// is: following never lowers a higher role.
func FollowKeeps(role string) bool { return AtLeast(role, RoleFollower) }

// CanUnfollow decides who may drop their membership by unfollowing. Only a
// FOLLOWER may: the creator owns the app, and ADMIN, MODERATOR and SUBSCRIBER
// roles are granted by the creator or paid for, so silently deleting them on
// an unfollow click would lose something the user cannot get back alone.
// Viewers without a membership may call it too; nothing changes for them.
func CanUnfollow(role string) bool {
	return role == RoleFollower || role == RoleAuthenticated
}
