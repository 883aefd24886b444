package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

const (
	ItemPhysical     = "PHYSICAL"
	ItemDigital      = "DIGITAL"
	ItemService      = "SERVICE"
	ItemSubscription = "SUBSCRIPTION"
	ItemEventTicket  = "EVENT_TICKET"
)

// StoreItem prices are integer cents. Stock nil means untracked.
type StoreItem struct {
	bun.BaseModel `bun:"table:store_items"`

	ID           string `bun:",pk" json:"id"`
	AppID        string `bun:",notnull" json:"appId"`
	StoreID      string `bun:",notnull" json:"storeId"`
	Name         string `bun:",notnull" json:"name"`
	Description  string `bun:",notnull,default:''" json:"description"`
	Type         string `bun:",notnull" json:"type"`
	Price        int64  `bun:",notnull" json:"price"`
	ComparePrice *int64 `json:"comparePrice"`
	Currency     string `bun:",notnull,default:'USD'" json:"currency"`
	Stock        *int64 `json:"stock"`
	SKU          string `bun:"sku,notnull,default:''" json:"sku"`
	IsFeatured   bool   `bun:",notnull,default:false" json:"isFeatured"`
	Settings     string `bun:",notnull,default:'{}'" json:"-"`
	// EventID is the event an EVENT_TICKET admits to (nil for other types;
	// migration 20261123130001).
	EventID   *string   `json:"eventId"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
	UpdatedAt time.Time `bun:",notnull,default:current_timestamp" json:"updatedAt"`
	// DeletedAt is set instead of deleting the row, so carts and orders
	// that hold the item keep it (migration 20261123000001).
	DeletedAt *time.Time `json:"-"`
}

type StoreItemMedia struct {
	bun.BaseModel `bun:"table:store_item_media"`

	StoreItemID string `bun:",pk"`
	MediaID     string `bun:",pk"`
	AppID       string `bun:",notnull"`
	Position    int    `bun:",notnull,default:0"`
}

type StoreItemTag struct {
	bun.BaseModel `bun:"table:store_item_tags"`

	StoreItemID string `bun:",pk"`
	TagID       string `bun:",pk"`
	AppID       string `bun:",notnull"`
}

type Variant struct {
	bun.BaseModel `bun:"table:variants"`

	ID              string `bun:",pk" json:"id"`
	AppID           string `bun:",notnull" json:"-"`
	StoreItemID     string `bun:",notnull" json:"storeItemId"`
	Name            string `bun:",notnull" json:"name"`
	Value           string `bun:",notnull" json:"value"`
	PriceAdjustment int64  `bun:",notnull,default:0" json:"priceAdjustment"`
	Stock           *int64 `json:"stock"`
	Position        int    `bun:",notnull,default:0" json:"-"`
	// DeletedAt: removed from the item, kept for the cart lines that hold
	// it (migration 20261123000002).
	DeletedAt *time.Time `json:"-"`
}

// ItemTypes are the store item types of SPEC.md section 3.
var ItemTypes = []string{ItemPhysical, ItemDigital, ItemService, ItemSubscription, ItemEventTicket}

// IsItemType reports whether t is one of ItemTypes.
func IsItemType(t string) bool {
	for _, x := range ItemTypes {
		if x == t {
			return true
		}
	}
	return false
}

// ItemFilter is the store grid's query (SPEC.md section 7): every field is
// optional; zero values filter nothing. Prices are cents.
type ItemFilter struct {
	Type     string
	MinPrice *int64
	MaxPrice *int64
	InStock  bool
	Search   string
	Tags     []string
	Page     int
	Limit    int
}

// Apply narrows a select over store_items (aliased "store_item") to the
// filter. Untracked stock (NULL) counts as in stock.
func (f ItemFilter) Apply(q *bun.SelectQuery) *bun.SelectQuery {
	if f.Type != "" {
		q = q.Where("store_item.type = ?", f.Type)
	}
	if f.MinPrice != nil {
		q = q.Where("store_item.price >= ?", *f.MinPrice)
	}
	if f.MaxPrice != nil {
		q = q.Where("store_item.price <= ?", *f.MaxPrice)
	}
	if f.InStock {
		q = q.Where("(store_item.stock IS NULL OR store_item.stock > 0)")
	}
	if s := strings.TrimSpace(f.Search); s != "" {
		pattern := "%" + escapeLike(strings.ToLower(s)) + "%"
		q = q.Where(`(LOWER(store_item.name) LIKE ? ESCAPE '\' OR LOWER(store_item.description) LIKE ? ESCAPE '\')`, pattern, pattern)
	}
	if len(f.Tags) > 0 {
		q = q.Where("EXISTS (SELECT 1 FROM store_item_tags AS st JOIN tags AS t ON t.id = st.tag_id "+
			"WHERE st.store_item_id = store_item.id AND t.name IN (?))", bun.List(f.Tags))
	}
	return q
}

// key spells the filter out (without page and limit) for a cache key.
func (f ItemFilter) key() string {
	out := fmt.Sprintf("type=%q stock=%t search=%q tags=%q", f.Type, f.InStock, f.Search, f.Tags)
	if f.MinPrice != nil {
		out += fmt.Sprintf(" min=%d", *f.MinPrice)
	}
	if f.MaxPrice != nil {
		out += fmt.Sprintf(" max=%d", *f.MaxPrice)
	}
	return out
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// ItemPage is one page of the grid.
type ItemPage struct {
	Items      []ItemView
	Pagination Pagination
}

// ShopByID loads a store row.
func (s *Storage) ShopByID(ctx context.Context, id string) (*Shop, error) {
	st := new(Shop)
	if err := selectOne(ctx, s.db.NewSelect().Model(st).Where("id = ?", id), "store "+id); err != nil {
		return nil, err
	}
	return st, nil
}

// ShopOfApp loads the app's store row.
func (s *Storage) ShopOfApp(ctx context.Context, appID string) (*Shop, error) {
	st := new(Shop)
	if err := selectOne(ctx, s.db.NewSelect().Model(st).Where("app_id = ?", appID), "store of "+appID); err != nil {
		return nil, err
	}
	return st, nil
}

// Items lists a store's live items, newest first. Ties on created_at are
// broken by id, so pages never repeat or skip an item.
// A page is cached per app version (cachedList).
func (s *Storage) Items(ctx context.Context, storeID string, f ItemFilter) (*ItemPage, error) {
	var shop Shop
	if err := selectOne(ctx, s.db.NewSelect().Model(&shop).Column("app_id").Where("id = ?", storeID), "store "+storeID); err != nil {
		return nil, err
	}
	page, limit := ClampPage(f.Page, f.Limit)
	out := new(ItemPage)
	key := "items:" + storeID + ":" + f.key() + ":" + strconv.Itoa(page) + ":" + strconv.Itoa(limit)
	err := s.cachedList(ctx, shop.AppID, key, out, func(ctx context.Context) error {
		p, err := s.items(ctx, storeID, shop.AppID, f)
		if err == nil {
			*out = *p
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Storage) items(ctx context.Context, storeID, appID string, f ItemFilter) (*ItemPage, error) {
	page, limit := ClampPage(f.Page, f.Limit)
	var items []StoreItem
	q := s.db.NewSelect().Model(&items).Where("store_item.store_id = ? AND store_item.deleted_at IS NULL AND store_item.type <> ?", storeID, ItemSubscription)
	if err := f.Apply(q).Order("store_item.created_at DESC", "store_item.id DESC").
		Limit(int64(limit)).Offset(int64((page - 1) * limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load items of %s: %w", storeID, err)
	}
	// The total is counted once per app version and filter (listTotal).
	total, err := s.listTotal(ctx, appID, "items:"+storeID+":"+f.key(), func(ctx context.Context) (int, error) {
		q := s.db.NewSelect().Model((*StoreItem)(nil)).Where("store_item.store_id = ? AND store_item.deleted_at IS NULL AND store_item.type <> ?", storeID, ItemSubscription)
		n, err := f.Apply(q).Count(ctx)
		if err != nil {
			return 0, fmt.Errorf("count items of %s: %w", storeID, err)
		}
		return int(n), nil
	})
	if err != nil {
		return nil, err
	}
	views, err := s.itemViews(ctx, s.db, items)
	if err != nil {
		return nil, err
	}
	return &ItemPage{Items: views, Pagination: NewPagination(page, limit, int(total))}, nil
}

// ItemByID loads a live item (ErrNotFound once deleted).
func (s *Storage) ItemByID(ctx context.Context, id string) (*StoreItem, error) {
	it := new(StoreItem)
	if err := selectOne(ctx, s.db.NewSelect().Model(it).Where("id = ? AND deleted_at IS NULL", id), "item "+id); err != nil {
		return nil, err
	}
	return it, nil
}

// ItemView loads one item with its media, tags, variants and plan.
func (s *Storage) ItemView(ctx context.Context, it *StoreItem) (*ItemView, error) {
	views, err := s.itemViews(ctx, s.db, []StoreItem{*it})
	if err != nil {
		return nil, err
	}
	return &views[0], nil
}

// ItemInput is a new or edited item as a creator submits it; the server
// validates it (server/store_item_write.go) before it gets here.
type ItemInput struct {
	Name, Description, Type, SKU string
	Price                        int64
	ComparePrice, Stock          *int64
	IsFeatured                   bool
	Tags                         []string
	MediaIDs                     []string
	Variants                     []VariantInput
	// EventID links an EVENT_TICKET to an event of the same app; ignored
	// (and cleared) for other types.
	EventID string
}

// VariantInput: ID is empty for a new variant; an existing variant keeps its
// id so cart lines that hold it stay valid.
type VariantInput struct {
	ID              string
	Name, Value     string
	PriceAdjustment int64
	Stock           *int64
}

// SaveItem creates (it.ID empty) or updates an item of shop in one
// transaction, with its tags, media and variants. Media must be uploaded
// files of the app; variant ids must be the item's own.
func (s *Storage) SaveItem(ctx context.Context, shop *Shop, itemID string, in ItemInput) (*StoreItem, error) {
	now := time.Now().UTC()
	it := &StoreItem{ID: itemID, AppID: shop.AppID, StoreID: shop.ID}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, shop.AppID)
		if itemID != "" {
			if err := selectOne(ctx, tx.NewSelect().Model(it).Where("id = ? AND store_id = ? AND deleted_at IS NULL", itemID, shop.ID), "item "+itemID); err != nil {
				return err
			}
		}
		it.Name, it.Description, it.Type, it.SKU = in.Name, in.Description, in.Type, in.SKU
		it.Price, it.ComparePrice, it.Stock, it.IsFeatured = in.Price, in.ComparePrice, in.Stock, in.IsFeatured
		it.Currency, it.UpdatedAt = shop.Currency, now
		it.EventID = nil
		if in.Type == ItemEventTicket && in.EventID != "" {
			n, err := tx.NewSelect().Model((*Event)(nil)).Where("id = ? AND app_id = ?", in.EventID, shop.AppID).Count(ctx)
			if err != nil {
				return fmt.Errorf("check ticket event: %w", err)
			}
			if n == 0 {
				// Another app's event reads as missing: ids must not leak
				// across apps.
				return invalid("Event not found")
			}
			it.EventID = &in.EventID
		}
		if itemID == "" {
			it.ID, it.CreatedAt = NewID(), now
			if _, err := tx.NewInsert().Model(it).Exec(ctx); err != nil {
				return fmt.Errorf("insert item: %w", err)
			}
		} else if _, err := tx.NewUpdate().Model(it).WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("update item: %w", err)
		}
		if err := saveItemMedia(ctx, tx, it, uniq(in.MediaIDs)); err != nil {
			return err
		}
		if err := saveItemTags(ctx, tx, it, uniq(in.Tags)); err != nil {
			return err
		}
		return saveVariants(ctx, tx, it, in.Variants)
	})
	if err != nil {
		return nil, err
	}
	return it, nil
}

func saveItemMedia(ctx context.Context, tx bun.Tx, it *StoreItem, ids []string) error {
	if len(ids) > 0 {
		var media []Media
		if err := tx.NewSelect().Model(&media).Where("id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
			return fmt.Errorf("load item media: %w", err)
		}
		ok := map[string]bool{}
		for _, m := range media {
			ok[m.ID] = m.AppID != nil && *m.AppID == it.AppID && m.Status == MediaUploaded
		}
		for _, id := range ids {
			if !ok[id] {
				return invalid("Media not found or not uploaded")
			}
		}
	}
	if _, err := tx.NewDelete().Model((*StoreItemMedia)(nil)).Where("store_item_id = ?", it.ID).Exec(ctx); err != nil {
		return fmt.Errorf("clear item media: %w", err)
	}
	for i, id := range ids {
		if _, err := tx.NewInsert().Model(&StoreItemMedia{StoreItemID: it.ID, MediaID: id, AppID: it.AppID, Position: i}).Exec(ctx); err != nil {
			return fmt.Errorf("link item media: %w", err)
		}
	}
	return nil
}

func saveItemTags(ctx context.Context, tx bun.Tx, it *StoreItem, names []string) error {
	if _, err := tx.NewDelete().Model((*StoreItemTag)(nil)).Where("store_item_id = ?", it.ID).Exec(ctx); err != nil {
		return fmt.Errorf("clear item tags: %w", err)
	}
	for _, name := range names {
		tag := &Tag{ID: NewID(), AppID: it.AppID, Name: name}
		if _, err := tx.NewInsert().Model(tag).On("CONFLICT (app_id, name) DO NOTHING").Exec(ctx); err != nil {
			return fmt.Errorf("create tag: %w", err)
		}
		if err := tx.NewSelect().Model(tag).Where("app_id = ? AND name = ?", it.AppID, name).Limit(1).Scan(ctx); err != nil {
			return fmt.Errorf("load tag: %w", err)
		}
		if _, err := tx.NewInsert().Model(&StoreItemTag{StoreItemID: it.ID, TagID: tag.ID, AppID: it.AppID}).Exec(ctx); err != nil {
			return fmt.Errorf("tag item: %w", err)
		}
	}
	return nil
}

// saveVariants updates kept variants in place, inserts new ones and marks
// the rest deleted; cart lines holding a deleted variant stay, flagged.
func saveVariants(ctx context.Context, tx bun.Tx, it *StoreItem, in []VariantInput) error {
	var existing []Variant
	if err := tx.NewSelect().Model(&existing).Where("store_item_id = ? AND deleted_at IS NULL", it.ID).Scan(ctx); err != nil {
		return fmt.Errorf("load variants: %w", err)
	}
	own := map[string]bool{}
	for _, v := range existing {
		own[v.ID] = true
	}
	kept := map[string]bool{}
	for i, v := range in {
		row := &Variant{ID: v.ID, AppID: it.AppID, StoreItemID: it.ID, Name: v.Name, Value: v.Value,
			PriceAdjustment: v.PriceAdjustment, Stock: v.Stock, Position: i}
		if v.ID != "" && own[v.ID] {
			kept[v.ID] = true
			if _, err := tx.NewUpdate().Model(row).WherePK().Exec(ctx); err != nil {
				return fmt.Errorf("update variant: %w", err)
			}
			continue
		}
		if v.ID != "" {
			return invalid("Variant not found")
		}
		row.ID = NewID()
		if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
			return fmt.Errorf("insert variant: %w", err)
		}
	}
	for id := range own {
		if kept[id] {
			continue
		}
		if _, err := tx.NewUpdate().Model((*Variant)(nil)).Set("deleted_at = ?", time.Now().UTC()).Where("id = ?", id).Exec(ctx); err != nil {
			return fmt.Errorf("delete variant: %w", err)
		}
	}
	return nil
}

// DeleteItem marks an item deleted. Carts keep the line (flagged), orders
// keep their own copy of name and price.
func (s *Storage) DeleteItem(ctx context.Context, it *StoreItem) error {
	now := time.Now().UTC()
	if _, err := s.db.NewUpdate().Model((*StoreItem)(nil)).Set("deleted_at = ?", now).Set("updated_at = ?", now).
		Where("id = ?", it.ID).Exec(ctx); err != nil {
		return fmt.Errorf("delete item: %w", err)
	}
	s.InvalidateLanding(ctx, it.AppID)
	return nil
}
