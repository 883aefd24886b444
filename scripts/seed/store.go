package seed

import (
	"context"
	"fmt"
	"time"

	"marquee/store"
)

type variantSpec struct {
	name, value string
	adjust      int64
	stock       *int64
}

type itemSpec struct {
	name, desc, typ, sku string
	price                int64
	compare, stock       *int64 // stock nil = untracked
	featured             bool
	images               int
	tags                 []string
	variants             []variantSpec
	event                string // an EVENT_TICKET admits to the demo event of this name
}

// demoItems cover every item type and every stock state: untracked (nil),
// low (1 to 5), out (0) and plenty.
var demoItems = []itemSpec{
	{name: "Midnight Bloom: Vinyl LP", typ: store.ItemPhysical, sku: "VNL-MB-01", price: 2999, compare: ptr[int64](3499), stock: ptr[int64](3),
		featured: true, images: 2, tags: []string{"vinyl", "music"},
		desc: "180 g translucent violet vinyl in a gatefold sleeve with a 12-page lyric booklet and original cover painting."},
	{name: "Night Shift Tour Tee", typ: store.ItemPhysical, sku: "TEE-NS-01", price: 2500, stock: ptr[int64](14),
		featured: true, images: 2, tags: []string{"merch"},
		desc:     "Soft organic cotton tee with the hand-drawn lighthouse on the front and tour dates on the back.",
		variants: []variantSpec{{"Size", "S", 0, ptr[int64](10)}, {"Size", "M", 0, ptr[int64](0)}, {"Size", "L", 200, ptr[int64](4)}}},
	{name: "Signed Art Print (A3)", typ: store.ItemPhysical, sku: "PRT-A3-01", price: 4000, stock: ptr[int64](0),
		images: 1, tags: []string{"art"},
		desc: "Giclee print of the Midnight Bloom cover on archival paper, numbered and signed."},
	{name: "Enamel Pin Set", typ: store.ItemPhysical, sku: "PIN-SET-01", price: 1200, stock: ptr[int64](120),
		images: 1, tags: []string{"merch"},
		desc: "Three hard-enamel pins: moth, lighthouse and cassette."},
	{name: "Lighthouse Hoodie", typ: store.ItemPhysical, sku: "HOOD-LH-01", price: 5500, compare: ptr[int64](6500), stock: ptr[int64](25),
		images: 2, tags: []string{"merch"},
		desc:     "Heavyweight hoodie with embroidered lighthouse. Runs slightly large.",
		variants: []variantSpec{{"Size", "S", 0, ptr[int64](5)}, {"Size", "M", 0, ptr[int64](8)}, {"Size", "L", 0, ptr[int64](7)}, {"Size", "XL", 300, ptr[int64](5)}}},
	{name: "Midnight Bloom: Digital Album", typ: store.ItemDigital, sku: "DIG-MB-01", price: 999,
		featured: true, images: 1, tags: []string{"music"},
		desc: "Ten tracks in lossless FLAC and 320 kbps MP3, plus a PDF lyric booklet."},
	{name: "Night Shift Sample Pack", typ: store.ItemDigital, sku: "DIG-SP-01", price: 1999, compare: ptr[int64](2999),
		images: 1, tags: []string{"music"},
		desc: "Over 200 one-shots, loops and synth patches recorded for the album. Royalty free."},
	{name: "Gouache Brush Set for Procreate", typ: store.ItemDigital, sku: "DIG-BR-01", price: 1500,
		images: 1, tags: []string{"art"},
		desc: "The 18 custom brushes used for the cover art, with a short video on how to use them."},
	{name: "Custom Portrait Commission", typ: store.ItemService, sku: "SRV-PRT-01", price: 15000, stock: ptr[int64](2),
		images: 2, tags: []string{"art"},
		desc: "A hand-painted portrait in the Midnight Bloom style, delivered as a high-resolution file within four weeks. Two slots left this month."},
	{name: "Mix Feedback Session", typ: store.ItemService, sku: "SRV-MIX-01", price: 7500,
		images: 1, tags: []string{"music"},
		desc:     "A one-to-one video call where Luna listens to your mix and gives practical notes.",
		variants: []variantSpec{{"Length", "30 minutes", 0, nil}, {"Length", "60 minutes", 5000, nil}}},
	{name: "Studio Circle Membership", typ: store.ItemSubscription, sku: "SUB-SC-01", price: 800,
		featured: true, images: 1,
		desc: "Monthly stems, early demos, a members-only listening party and a discount on merch."},
	{name: "Summer Tour Kick-off Ticket", typ: store.ItemEventTicket, sku: "TIX-ST-01", price: 3500, stock: ptr[int64](40),
		images: 1, tags: []string{"tour"}, event: "Summer Tour Kick-off",
		desc: "General admission to the first night of the summer tour at the Crystal Ballroom."},
}

func (s *seeder) demoStore(ctx context.Context, app *store.App) error {
	var shopID string
	if err := s.tx.NewSelect().Model((*store.Shop)(nil)).Column("id").Where("app_id = ?", app.ID).Scan(ctx, &shopID); err != nil {
		return err
	}
	creator := s.user("creator")
	for i, it := range demoItems {
		// Older items first, so "newest" ordering follows the list backwards.
		at := s.now.Add(-time.Duration(len(demoItems)-i) * 2 * day)
		item := &store.StoreItem{ID: store.NewID(), AppID: app.ID, StoreID: shopID, Name: it.name, Description: it.desc,
			Type: it.typ, Price: it.price, ComparePrice: it.compare, Currency: "USD", Stock: it.stock, SKU: it.sku,
			IsFeatured: it.featured, CreatedAt: at, UpdatedAt: at}
		if it.event != "" {
			// The events are seeded first; buying the ticket admits to its event.
			var eventID string
			if err := s.tx.NewSelect().Model((*store.Event)(nil)).Column("id").
				Where("app_id = ? AND name = ?", app.ID, it.event).Scan(ctx, &eventID); err != nil {
				return fmt.Errorf("ticket event %q: %w", it.event, err)
			}
			item.EventID = &eventID
		}
		if err := s.insert(ctx, item); err != nil {
			return err
		}
		for j := 0; j < it.images; j++ {
			id, err := s.image(ctx, app.ID, creator.ID, kindItem, "item.jpg")
			if err != nil {
				return err
			}
			if err := s.insert(ctx, &store.StoreItemMedia{StoreItemID: item.ID, MediaID: id, AppID: app.ID, Position: j}); err != nil {
				return err
			}
		}
		for _, name := range it.tags {
			tagID, err := s.tag(ctx, app.ID, name)
			if err != nil {
				return err
			}
			if err := s.insert(ctx, &store.StoreItemTag{StoreItemID: item.ID, TagID: tagID, AppID: app.ID}); err != nil {
				return err
			}
		}
		for j, v := range it.variants {
			row := &store.Variant{ID: store.NewID(), AppID: app.ID, StoreItemID: item.ID, Name: v.name, Value: v.value,
				PriceAdjustment: v.adjust, Stock: v.stock, Position: j}
			if err := s.insert(ctx, row); err != nil {
				return err
			}
		}
		if it.typ == store.ItemSubscription {
			if err := s.subscribe(ctx, app.ID, item.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// subscribe makes the membership item the first of three tiers (the other
// two are items of their own, off the store's grid like every tier) and
// gives subscriber@demo.test an active membership of the first that
// outlasts any demo session.
func (s *seeder) subscribe(ctx context.Context, appID, itemID string) error {
	monthly, yearly := int64(800), int64(8000)
	plan := &store.SubscriptionPlan{ID: store.NewID(), AppID: appID, StoreItemID: itemID, BillingCycle: "MONTHLY",
		Rank: 1, State: store.TierOnSale, MonthlyPrice: &monthly, YearlyPrice: &yearly}
	sub := &store.Subscription{ID: store.NewID(), AppID: appID, UserID: s.user("subscriber").ID, PlanID: plan.ID,
		Status: "ACTIVE", CurrentPeriodEnd: s.now.AddDate(1, 0, 0), CreatedAt: s.now.AddDate(0, -2, 0), Cycle: "MONTHLY"}
	if err := s.insert(ctx, plan, sub); err != nil {
		return err
	}
	var storeID string
	if err := s.tx.NewSelect().Model((*store.Shop)(nil)).Column("id").Where("app_id = ?", appID).Scan(ctx, &storeID); err != nil {
		return err
	}
	for i, t := range []struct {
		name, desc, cycle string
		monthly, yearly   *int64
		trial             int
		benefits          string
	}{
		{"Backstage Pass", "Everything in Studio Circle, plus the monthly backstage video call.", "MONTHLY",
			ptr[int64](1500), ptr[int64](15000), 7, `{"benefits":["Everything in Studio Circle","Monthly backstage video call","Vote on the next single"]}`},
		{"Producer's Room", "A yearly seat in the room: session files and a credit on the next record.", "YEARLY",
			nil, ptr[int64](10000), 0, `{"benefits":["Everything in Backstage Pass","Session files of every track","Your name in the credits"]}`},
	} {
		price := int64(0)
		if t.monthly != nil {
			price = *t.monthly
		} else {
			price = *t.yearly
		}
		at := s.now.Add(-time.Duration(20-i) * day)
		item := &store.StoreItem{ID: store.NewID(), AppID: appID, StoreID: storeID, Name: t.name, Description: t.desc,
			Type: store.ItemSubscription, Price: price, Currency: "USD", Settings: t.benefits, CreatedAt: at, UpdatedAt: at}
		tier := &store.SubscriptionPlan{ID: store.NewID(), AppID: appID, StoreItemID: item.ID, BillingCycle: t.cycle,
			Rank: i + 2, State: store.TierOnSale, MonthlyPrice: t.monthly, YearlyPrice: t.yearly, TrialDays: t.trial}
		if err := s.insert(ctx, item, tier); err != nil {
			return err
		}
	}
	return nil
}
