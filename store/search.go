package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// SearchScope says which sections the viewer may see; the server decides it
// from the app's features and the viewer's flags (server/access).
type SearchScope struct{ Posts, Items, Events bool }

// SearchHit is one result, linked to its page inside the app.
type SearchHit struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Snippet   string    `json:"snippet"`
	Link      string    `json:"link"`
	CreatedAt time.Time `json:"createdAt"`
}

// SearchResults are grouped as the overlay shows them.
type SearchResults struct {
	Query  string      `json:"query"`
	Posts  []SearchHit `json:"posts"`
	Items  []SearchHit `json:"items"`
	Events []SearchHit `json:"events"`
}

// SearchLimit is the most hits per group.
const SearchLimit = 10

// Search looks for q in the app's posts, store items and events.
// PostgreSQL matches words with full-text search (English stemming, so
// "painting" finds "paintings") plus a substring match for partial words;
// SQLite, the embedded default, matches substrings case-insensitively (LIKE).
// Everything is scoped by app: nothing of another app is ever returned.
func (s *Storage) Search(ctx context.Context, appID, appName, q string, scope SearchScope) (*SearchResults, error) {
	q = strings.Join(strings.Fields(q), " ")
	res := &SearchResults{Query: q, Posts: []SearchHit{}, Items: []SearchHit{}, Events: []SearchHit{}}
	if q == "" {
		return res, nil
	}
	pg := s.DB.Dialect().Name() == dialect.PG
	like := "%" + escapeLike(strings.ToLower(q)) + "%"
	match := func(sel *bun.SelectQuery, cols ...string) *bun.SelectQuery {
		return sel.WhereGroup(" AND ", func(w *bun.SelectQuery) *bun.SelectQuery {
			if pg {
				doc := "coalesce(" + strings.Join(cols, ",'') || ' ' || coalesce(") + ",'')"
				w = w.WhereOr("to_tsvector('english', "+doc+") @@ websearch_to_tsquery('english', ?)", q)
			}
			for _, c := range cols {
				w = w.WhereOr("lower("+c+") LIKE ? ESCAPE '\\'", like)
			}
			return w
		})
	}
	base := "/apps/" + appName
	if scope.Posts {
		var rows []Message
		if err := match(s.DB.NewSelect().Model(&rows).Where("app_id = ? AND type = ?", appID, MessagePost), "content").
			Order("created_at DESC").Limit(SearchLimit).Scan(ctx); err != nil {
			return nil, fmt.Errorf("search posts: %w", err)
		}
		for _, m := range rows {
			res.Posts = append(res.Posts, SearchHit{ID: m.ID, Title: Snippet(m.Content, 80), Link: base + "/posts/" + m.ID, CreatedAt: m.CreatedAt})
		}
	}
	if scope.Items {
		var rows []StoreItem
		if err := match(s.DB.NewSelect().Model(&rows).Where("app_id = ? AND deleted_at IS NULL", appID), "name", "description").
			Order("created_at DESC").Limit(SearchLimit).Scan(ctx); err != nil {
			return nil, fmt.Errorf("search items: %w", err)
		}
		for _, it := range rows {
			res.Items = append(res.Items, SearchHit{ID: it.ID, Title: it.Name, Snippet: Snippet(it.Description, 80),
				Link: base + "/store/items/" + it.ID, CreatedAt: it.CreatedAt})
		}
	}
	if scope.Events {
		var rows []Event
		if err := match(s.DB.NewSelect().Model(&rows).Where("app_id = ?", appID), "name", "description", "location").
			Order("start_date DESC").Limit(SearchLimit).Scan(ctx); err != nil {
			return nil, fmt.Errorf("search events: %w", err)
		}
		for _, e := range rows {
			res.Events = append(res.Events, SearchHit{ID: e.ID, Title: e.Name, Snippet: Snippet(e.Description, 80),
				Link: base + "/events/" + e.ID, CreatedAt: e.StartDate})
		}
	}
	return res, nil
}
