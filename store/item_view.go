package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// ItemView is a store item in the shape of SPEC.md section 3.
type ItemView struct {
	ID               string            `json:"id"`
	StoreID          string            `json:"storeId"`
	Name             string            `json:"name"`
	Description      string            `json:"description"`
	Type             string            `json:"type" tstype:"ItemType"`
	Price            int64             `json:"price"`
	ComparePrice     *int64            `json:"comparePrice"`
	Currency         string            `json:"currency"`
	Stock            *int64            `json:"stock"`
	SKU              string            `json:"sku"`
	IsFeatured       bool              `json:"isFeatured"`
	Media            []MediaView       `json:"media"`
	Tags             []TagView         `json:"tags"`
	Variants         []VariantView     `json:"variants"`
	SubscriptionPlan *SubscriptionPlan `json:"subscriptionPlan,omitempty"`
	// Benefits are a membership plan's benefits as the studio lists them
	// (SUBSCRIPTION items only), shown to members choosing a plan.
	Benefits  []string  `json:"benefits,omitempty"`
	EventID   *string   `json:"eventId"`
	CreatedAt time.Time `json:"createdAt"`
}

type VariantView struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Value           string `json:"value"`
	PriceAdjustment int64  `json:"priceAdjustment"`
	Price           int64  `json:"price"`
	Stock           *int64 `json:"stock"`
}

func (s *Storage) itemViews(ctx context.Context, db bun.IDB, items []StoreItem) ([]ItemView, error) {
	views := make([]ItemView, len(items))
	if len(items) == 0 {
		return views, nil
	}
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	var links []StoreItemMedia
	if err := db.NewSelect().Model(&links).Where("store_item_id IN (?)", bun.List(ids)).Order("position ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load item media: %w", err)
	}
	mediaIDs := make([]string, len(links))
	for i, l := range links {
		mediaIDs[i] = l.MediaID
	}
	media, err := s.mediaViews(ctx, db, mediaIDs)
	if err != nil {
		return nil, err
	}
	var variants []Variant
	if err := db.NewSelect().Model(&variants).Where("store_item_id IN (?) AND deleted_at IS NULL", bun.List(ids)).Order("position ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load variants: %w", err)
	}
	var plans []SubscriptionPlan
	if err := db.NewSelect().Model(&plans).Where("store_item_id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load plans: %w", err)
	}
	var tags []struct {
		StoreItemID string `bun:"store_item_id"`
		ID          string `bun:"id"`
		Name        string `bun:"name"`
	}
	if err := db.NewSelect().TableExpr("store_item_tags AS st").Join("JOIN tags AS t ON t.id = st.tag_id").
		ColumnExpr("st.store_item_id, t.id, t.name").Where("st.store_item_id IN (?)", bun.List(ids)).
		OrderExpr("t.name ASC").Scan(ctx, &tags); err != nil {
		return nil, fmt.Errorf("load item tags: %w", err)
	}
	index := make(map[string]*ItemView, len(items))
	for i, it := range items {
		views[i] = ItemView{
			ID: it.ID, StoreID: it.StoreID, Name: it.Name, Description: it.Description, Type: it.Type,
			Price: it.Price, ComparePrice: it.ComparePrice, Currency: it.Currency, Stock: it.Stock,
			SKU: it.SKU, IsFeatured: it.IsFeatured, Media: []MediaView{}, Tags: []TagView{},
			Variants: []VariantView{}, EventID: it.EventID, CreatedAt: it.CreatedAt,
		}
		if it.Type == ItemSubscription {
			var ps planSettings
			if json.Unmarshal([]byte(it.Settings), &ps) == nil && len(ps.Benefits) > 0 {
				views[i].Benefits = ps.Benefits
			}
		}
		index[it.ID] = &views[i]
	}
	for _, l := range links {
		if mv, ok := media[l.MediaID]; ok {
			index[l.StoreItemID].Media = append(index[l.StoreItemID].Media, mv)
		}
	}
	for _, v := range variants {
		item := index[v.StoreItemID]
		item.Variants = append(item.Variants, VariantView{
			ID: v.ID, Name: v.Name, Value: v.Value, PriceAdjustment: v.PriceAdjustment,
			Price: item.Price + v.PriceAdjustment, Stock: v.Stock,
		})
	}
	for i := range plans {
		index[plans[i].StoreItemID].SubscriptionPlan = &plans[i]
	}
	for _, t := range tags {
		index[t.StoreItemID].Tags = append(index[t.StoreItemID].Tags, TagView{ID: t.ID, Name: t.Name})
	}
	return views, nil
}
