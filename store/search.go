package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// SearchScope says which sections the viewer may see; the server decides it
// from the app's features and the viewer's flags (server/access).
type SearchScope struct {
	Posts, Items, Events bool
	// Reader: only posts it may read are searched (message_access.go).
	Reader Reader
}

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
// "painting" finds "paintings") plus a substring match for partial words.
// SQLite, the embedded default, matches words through the FTS5 indexes of
// migration 20261123140001_search_fts, the last word as a prefix (the overlay
// searches as you type), and ranks by bm25. Everything is scoped by app:
// nothing of another app is ever returned.
func (s *Storage) Search(ctx context.Context, appID, appName, q string, scope SearchScope) (*SearchResults, error) {
	q = strings.Join(strings.Fields(q), " ")
	res := &SearchResults{Query: q, Posts: []SearchHit{}, Items: []SearchHit{}, Events: []SearchHit{}}
	if q == "" {
		return res, nil
	}
	pg := s.db.Dialect().Name() == dialect.PG
	fts := ftsQuery(q)
	if !pg && fts == "" {
		return res, nil // only punctuation: no word to look for
	}
	like := "%" + escapeLike(strings.ToLower(q)) + "%"
	// match narrows sel (whose model alias is alias) to rows matching q and
	// orders them, best first; order is the tie-break and PostgreSQL's order.
	match := func(sel *bun.SelectQuery, alias, ftsTable, order string, weights string, cols ...string) *bun.SelectQuery {
		if !pg {
			return sel.Join(`JOIN "`+ftsTable+`" ON "`+ftsTable+`".id = "`+alias+`".id`).
				Where(`"`+ftsTable+`" MATCH ?`, fts).
				OrderExpr(`bm25("` + ftsTable + `", ` + weights + `)`).Order(order)
		}
		return sel.WhereGroup(" AND ", func(w *bun.SelectQuery) *bun.SelectQuery {
			doc := "coalesce(" + strings.Join(cols, ",'') || ' ' || coalesce(") + ",'')"
			w = w.WhereOr("to_tsvector('english', "+doc+") @@ websearch_to_tsquery('english', ?)", q)
			for _, c := range cols {
				w = w.WhereOr("lower("+c+") LIKE ? ESCAPE '\\'", like)
			}
			return w
		}).Order(order)
	}
	base := "/apps/" + appName
	if scope.Posts {
		var rows []Message
		if err := match(ReadableWhere(s.db.NewSelect().Model(&rows).Where("message.app_id = ? AND message.type = ? AND message.hidden = ''", appID, MessagePost), "message", scope.Reader),
			"message", "messages_fts", "message.created_at DESC", "0, 1", "message.content").
			Limit(SearchLimit).Scan(ctx); err != nil {
			return nil, fmt.Errorf("search posts: %w", err)
		}
		for _, m := range rows {
			res.Posts = append(res.Posts, SearchHit{ID: m.ID, Title: Snippet(m.Content, 80), Link: base + "/posts/" + m.ID, CreatedAt: m.CreatedAt})
		}
	}
	if scope.Items {
		var rows []StoreItem
		// A word in the name weighs more than one in the description.
		if err := match(s.db.NewSelect().Model(&rows).Where("store_item.app_id = ? AND store_item.deleted_at IS NULL", appID),
			"store_item", "store_items_fts", "store_item.created_at DESC", "0, 5, 1", "store_item.name", "store_item.description").
			Limit(SearchLimit).Scan(ctx); err != nil {
			return nil, fmt.Errorf("search items: %w", err)
		}
		for _, it := range rows {
			res.Items = append(res.Items, SearchHit{ID: it.ID, Title: it.Name, Snippet: Snippet(it.Description, 80),
				Link: base + "/store/items/" + it.ID, CreatedAt: it.CreatedAt})
		}
	}
	if scope.Events {
		var rows []Event
		// An event whose details are locked for the viewer is not searched:
		// its description and place would match (and show) otherwise.
		if err := match(ReadableWhere(s.db.NewSelect().Model(&rows).Where("event.app_id = ? AND event.hidden = ''", appID), "event", scope.Reader),
			"event", "events_fts", "event.start_date DESC", "0, 5, 1, 2", "event.name", "event.description", "event.location").
			Limit(SearchLimit).Scan(ctx); err != nil {
			return nil, fmt.Errorf("search events: %w", err)
		}
		for _, e := range rows {
			res.Events = append(res.Events, SearchHit{ID: e.ID, Title: e.Name, Snippet: Snippet(e.Description, 80),
				Link: base + "/events/" + e.ID, CreatedAt: e.StartDate})
		}
	}
	return res, nil
}

// ftsQuery turns what the viewer typed into an FTS5 query that cannot be a
// syntax error: every word becomes a quoted string (so AND, NEAR(, * and
// column filters are plain text), words are ANDed, and the last one matches
// as a prefix. Words without a letter or digit are dropped: the tokenizer
// would make them an empty phrase. "" means nothing is left to search for.
func ftsQuery(q string) string {
	var terms []string
	for _, w := range strings.Fields(q) {
		if strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) < 0 {
			continue
		}
		terms = append(terms, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
	}
	if len(terms) == 0 {
		return ""
	}
	return strings.Join(terms, " ") + "*"
}
