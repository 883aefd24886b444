package seed

import (
	"context"

	"marquee/store"
)

type seedUser struct {
	username, email string
	role            string // membership in demo; "" means none
}

// demoUsers has one user per role, a signed-in non-member, and two more
// story authors so the stories strip shows several people.
var demoUsers = []seedUser{
	{"creator", "creator@demo.test", store.RoleCreator},
	{"admin", "admin@demo.test", store.RoleAdmin},
	{"moderator", "moderator@demo.test", store.RoleModerator},
	{"subscriber", "subscriber@demo.test", store.RoleSubscriber},
	{"follower", "follower@demo.test", store.RoleFollower},
	{"member", "member@demo.test", ""},
	{"aria", "aria@demo.test", store.RoleSubscriber},
	{"jonah", "jonah@demo.test", store.RoleSubscriber},
}

func (s *seeder) createUsers(ctx context.Context, list []seedUser) error {
	for i, su := range list {
		// Older accounts first, so "member since" dates look plausible.
		created := s.now.AddDate(0, -6, i)
		u := &store.User{ID: store.NewID(), Username: su.username, Email: su.email, EmailVerified: true,
			PasswordHash: s.hash, CreatedAt: created, UpdatedAt: created}
		if err := s.insert(ctx, u); err != nil {
			return err
		}
		s.users[su.username] = u
	}
	return nil
}

// setProfilePicture gives a user a generated avatar stored under the app.
func (s *seeder) setProfilePicture(ctx context.Context, appID, username string) error {
	u := s.user(username)
	id, err := s.image(ctx, appID, u.ID, kindProfile, u.Username+".jpg")
	if err != nil {
		return err
	}
	u.ProfileMediaID = &id
	_, err = s.tx.NewUpdate().Model(u).Column("profile_media_id").WherePK().Exec(ctx)
	return err
}
