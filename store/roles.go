package store

// Roles in rank order (SPEC.md section 6). What each role may do is decided
// in server/access.
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
