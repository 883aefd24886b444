package server

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"
)

// A member's standing changed by someone else (the creator's gift and its
// end, here; a provider's webhook, the renewal job) shows on the member's
// very next page: the write bumps the member's scope in its transaction, so
// the page cache's remembered class for them is not used again. Before, it
// answered the old class for up to memberClassTTL.
func TestStandingChangedByOthersShowsAtOnce(t *testing.T) {
	t.Parallel()
	demoBoth(t, func(t *testing.T, db *bun.DB) {
		{
			f := newTierFixture(t, db)
			ctx := context.Background()
			backstage := f.tiers[1]
			var communityID string
			if err := f.ts.store.DB().NewSelect().Table("communities").Column("id").Where("app_id = ?", f.app.ID).Limit(1).Scan(ctx, &communityID); err != nil {
				t.Fatal(err)
			}
			creator := withSession(sessionFor(t, f.ts, "creator@demo.test"))
			if r := f.ts.do(t, "POST", "/api/messages", strings.NewReader(`{"content":"Axolotl-backstage-only","type":"POST","communityId":"`+communityID+`","access":{"audience":"MEMBERS","minTierId":"`+backstage.ID+`"}}`), jsonHeaders(creator)); r.Status != 201 {
				t.Fatalf("post: %d %s", r.Status, r.Body)
			}
			fanID, sess := f.fan(t, "gifted", 0)
			page := func() string {
				t.Helper()
				r := f.ts.do(t, "GET", "/apps/demo/community", nil, withSession(sess))
				if r.Status != 200 {
					t.Fatalf("community: %d", r.Status)
				}
				return r.Body
			}
			// Twice: the second answer comes from the remembered class.
			for range 2 {
				if strings.Contains(page(), "Axolotl-backstage-only") {
					t.Fatal("a follower reads the tier's post")
				}
			}
			gift := f.ts.do(t, "POST", "/api/studio/apps/demo/members/"+fanID+"/gift", strings.NewReader(`{"tierId":"`+backstage.ID+`","months":1}`), jsonHeaders(creator))
			if gift.Status != 200 && gift.Status != 201 {
				t.Fatalf("gift: %d %s", gift.Status, gift.Body)
			}
			if !strings.Contains(page(), "Axolotl-backstage-only") {
				t.Fatal("after the gift the member's page still shows the post locked")
			}
			if r := f.ts.do(t, "DELETE", "/api/studio/apps/demo/members/"+fanID+"/gift", nil, jsonHeaders(creator)); r.Status >= 300 {
				t.Fatalf("end gift: %d %s", r.Status, r.Body)
			}
			if strings.Contains(page(), "Axolotl-backstage-only") {
				t.Fatal("after the gift ended the member still reads the tier's post")
			}
		}
	})
}
