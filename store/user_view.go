package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// UserSummary is how another user appears next to content they made.
type UserSummary struct {
	ID       string      `json:"id"`
	Username string      `json:"username"`
	Media    []MediaView `json:"media"`
	// DonorTier is the Achievement Tier the user's paid donations reach in
	// the message's app (the badge beside their name in the feed); only
	// set on message senders.
	DonorTier string `json:"donorTier,omitempty"`
}

func (s *Storage) userSummaries(ctx context.Context, db bun.IDB, ids []string) (map[string]UserSummary, error) {
	out := make(map[string]UserSummary, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var users []User
	if err := db.NewSelect().Model(&users).Where("id IN (?)", bun.List(uniq(ids))).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load users: %w", err)
	}
	var pics []string
	for _, u := range users {
		pics = append(pics, derefIDs(u.ProfileMediaID)...)
	}
	media, err := s.mediaViews(ctx, db, pics)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		sum := UserSummary{ID: u.ID, Username: u.Username, Media: []MediaView{}}
		if m := pick(media, u.ProfileMediaID); m != nil {
			sum.Media = append(sum.Media, *m)
		}
		out[u.ID] = sum
	}
	return out, nil
}

func uniq(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
