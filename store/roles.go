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
	}
}

// SkipsSubscriptionGate: creators, admins and moderators always pass.
func SkipsSubscriptionGate(role string) bool {
	return AtLeast(role, RoleModerator)
}
