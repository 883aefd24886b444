package migrations

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
)

// Bans match an address as Gmail delivers it (issue 41 item 8): the e-mail
// of a ban on a gmail.com or googlemail.com address is stored without the
// local part's dots and '+tag', at gmail.com (store.BanEmailKey; this is a
// frozen copy of its rule at the time).
func init() {
	Migrations.MustRegister(func(ctx context.Context, db *bun.DB) error {
		var rows []struct {
			ID    string `bun:"id"`
			Email string `bun:"email"`
		}
		if err := db.NewSelect().Table("bans").Column("id", "email").
			Where("email LIKE ? OR email LIKE ?", "%@gmail.com", "%@googlemail.com").Scan(ctx, &rows); err != nil {
			return fmt.Errorf("ban e-mail keys: %w", err)
		}
		for _, r := range rows {
			local, _, _ := strings.Cut(strings.ToLower(r.Email), "@")
			local, _, _ = strings.Cut(local, "+")
			key := strings.ReplaceAll(local, ".", "") + "@gmail.com"
			if _, err := db.NewUpdate().Table("bans").Set("email = ?", key).Where("id = ?", r.ID).Exec(ctx); err != nil {
				return fmt.Errorf("ban e-mail keys: %w", err)
			}
		}
		return nil
	}, func(ctx context.Context, db *bun.DB) error {
		return nil // the keys still match the addresses they were made from
	})
}
