package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

type Cart struct {
	bun.BaseModel `bun:"table:carts"`

	ID        string    `bun:",pk" json:"id"`
	AppID     string    `bun:",notnull" json:"-"`
	StoreID   string    `bun:",notnull" json:"storeId"`
	UserID    string    `bun:",notnull" json:"-"`
	Status    string    `bun:",notnull,default:'ACTIVE'" json:"status"`
	ExpiresAt time.Time `bun:",notnull" json:"expiresAt"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
	UpdatedAt time.Time `bun:",notnull,default:current_timestamp" json:"updatedAt"`
}

type CartItem struct {
	bun.BaseModel `bun:"table:cart_items"`

	ID          string    `bun:",pk" json:"id"`
	AppID       string    `bun:",notnull" json:"-"`
	CartID      string    `bun:",notnull" json:"cartId"`
	StoreItemID string    `bun:",notnull" json:"itemId"`
	VariantID   *string   `json:"variantId"`
	Quantity    int64     `bun:",notnull" json:"quantity"`
	CreatedAt   time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

const (
	CartActive = "ACTIVE"
	// CartLifetime is pushed forward on every write: a member's cart is
	// kept while they keep using it.
	CartLifetime = 30 * 24 * time.Hour
)

// Reasons a cart line cannot be bought as it stands. The line stays in the
// cart, flagged, so the member sees what changed instead of losing it.
const (
	LineDeleted    = "DELETED"
	LineOutOfStock = "OUT_OF_STOCK"
	LineLowStock   = "INSUFFICIENT_STOCK"
	LineNoVariant  = "VARIANT_UNAVAILABLE"
	// LineVariantRequired: the line has no variant but its item has some
	// (added before a choice was required); checkout refuses it.
	LineVariantRequired = "VARIANT_REQUIRED"
	maxCartLineCount    = 100
)

// CartView is the cart of SPEC.md section 3. Totals are computed here from
// stored prices; nothing the client sends is read for them.
type CartView struct {
	ID         string      `json:"id"`
	StoreID    string      `json:"storeId"`
	Status     string      `json:"status"`
	Items      []CartLine  `json:"items"`
	Totals     CartTotals  `json:"totals"`
	ExpiresAt  *time.Time  `json:"expiresAt"`
	CreatedAt  *time.Time  `json:"createdAt"`
	UpdatedAt  *time.Time  `json:"updatedAt"`
	AppUserRel CartUserRel `json:"appUserRel"`
}

type CartUserRel struct {
	UserID string `json:"userId"`
}

type CartTotals struct {
	Subtotal  int64  `json:"subtotal"`
	ItemCount int64  `json:"itemCount"`
	Currency  string `json:"currency"`
}

type SelectedVariant struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CartLine is one item (and variant) in the cart. Price is the unit price
// now: the item's price plus the variant's adjustment. MaxQuantity is nil
// when stock is untracked.
type CartLine struct {
	ID               string            `json:"id"`
	ItemID           string            `json:"itemId"`
	StoreItemID      string            `json:"storeItemId"`
	StoreItem        ItemView          `json:"storeItem"`
	Item             ItemView          `json:"item"`
	VariantID        *string           `json:"variantId"`
	SelectedVariants []SelectedVariant `json:"selectedVariants"`
	Quantity         int64             `json:"quantity"`
	Price            int64             `json:"price"`
	LineTotal        int64             `json:"lineTotal"`
	Currency         string            `json:"currency"`
	MaxQuantity      *int64            `json:"maxQuantity"`
	Available        bool              `json:"available"`
	Issue            string            `json:"issue,omitempty" tstype:"'DELETED' | 'OUT_OF_STOCK' | 'INSUFFICIENT_STOCK' | 'VARIANT_UNAVAILABLE' | 'VARIANT_REQUIRED'"`
}

// emptyCart is what a member without a cart gets: no id, no items.
func emptyCart(shop *Shop, userID string) *CartView {
	return &CartView{StoreID: shop.ID, Status: CartActive, Items: []CartLine{},
		Totals: CartTotals{Currency: shop.Currency}, AppUserRel: CartUserRel{UserID: userID}}
}

// Cart returns the member's active cart in shop, or an empty one.
func (s *Storage) Cart(ctx context.Context, shop *Shop, userID string) (*CartView, error) {
	cart := new(Cart)
	err := selectOne(ctx, s.db.NewSelect().Model(cart).
		Where("store_id = ? AND user_id = ? AND status = ?", shop.ID, userID, CartActive), "cart")
	if errors.Is(err, ErrNotFound) {
		return emptyCart(shop, userID), nil
	}
	if err != nil {
		return nil, err
	}
	return s.cartView(ctx, s.db, shop, cart)
}

func (s *Storage) cartView(ctx context.Context, db bun.IDB, shop *Shop, cart *Cart) (*CartView, error) {
	view := emptyCart(shop, cart.UserID)
	view.ID, view.Status = cart.ID, cart.Status
	view.ExpiresAt, view.CreatedAt, view.UpdatedAt = &cart.ExpiresAt, &cart.CreatedAt, &cart.UpdatedAt
	var lines []CartItem
	if err := db.NewSelect().Model(&lines).Where("cart_id = ?", cart.ID).Order("created_at ASC", "id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load cart lines: %w", err)
	}
	if len(lines) == 0 {
		return view, nil
	}
	ids := make([]string, len(lines))
	for i, l := range lines {
		ids[i] = l.StoreItemID
	}
	// Deleted items too: their lines are shown, flagged.
	var items []StoreItem
	if err := db.NewSelect().Model(&items).Where("id IN (?)", bun.List(uniq(ids))).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load cart items: %w", err)
	}
	views, err := s.itemViews(ctx, db, items)
	if err != nil {
		return nil, err
	}
	// Deleted variants are not in the item views; load them for the
	// labels of the lines that hold them.
	var variantIDs []string
	for _, l := range lines {
		if l.VariantID != nil {
			variantIDs = append(variantIDs, *l.VariantID)
		}
	}
	allVariants := map[string]Variant{}
	if len(variantIDs) > 0 {
		var vs []Variant
		if err := db.NewSelect().Model(&vs).Where("id IN (?)", bun.List(uniq(variantIDs))).Scan(ctx); err != nil {
			return nil, fmt.Errorf("load cart variants: %w", err)
		}
		for _, v := range vs {
			allVariants[v.ID] = v
		}
	}
	byID := map[string]int{}
	for i := range items {
		byID[items[i].ID] = i
	}
	for _, l := range lines {
		i, ok := byID[l.StoreItemID]
		if !ok {
			continue // cannot happen: the foreign key keeps the row
		}
		it, iv := items[i], views[i]
		line := CartLine{ID: l.ID, ItemID: l.StoreItemID, StoreItemID: l.StoreItemID, StoreItem: iv, Item: iv,
			VariantID: l.VariantID, SelectedVariants: []SelectedVariant{}, Quantity: l.Quantity, Price: it.Price,
			Currency: it.Currency, Available: true}
		var variant *VariantView
		if l.VariantID != nil {
			for j := range iv.Variants {
				if iv.Variants[j].ID == *l.VariantID {
					variant = &iv.Variants[j]
				}
			}
			if variant != nil {
				line.Price += variant.PriceAdjustment
				line.SelectedVariants = append(line.SelectedVariants, SelectedVariant{variant.Name, variant.Value})
			} else if v, ok := allVariants[*l.VariantID]; ok {
				line.Price += v.PriceAdjustment
				line.SelectedVariants = append(line.SelectedVariants, SelectedVariant{v.Name, v.Value})
			}
		}
		line.MaxQuantity = lineLimit(&it, variant, otherQuantity(lines, l))
		switch {
		case it.DeletedAt != nil:
			line.Available, line.Issue = false, LineDeleted
		case l.VariantID != nil && variant == nil:
			line.Available, line.Issue = false, LineNoVariant
		case l.VariantID == nil && len(iv.Variants) > 0:
			line.Available, line.Issue = false, LineVariantRequired
		case line.MaxQuantity != nil && *line.MaxQuantity <= 0:
			line.Available, line.Issue = false, LineOutOfStock
		case line.MaxQuantity != nil && l.Quantity > *line.MaxQuantity:
			line.Available, line.Issue = false, LineLowStock
		}
		line.LineTotal = line.Price * line.Quantity
		if line.Available {
			view.Totals.Subtotal += line.LineTotal
		}
		view.Totals.ItemCount += line.Quantity
		view.Items = append(view.Items, line)
	}
	return view, nil
}

// otherQuantity sums the other lines of the same item: item stock covers
// every variant of it.
func otherQuantity(lines []CartItem, line CartItem) int64 {
	var n int64
	for _, l := range lines {
		if l.ID != line.ID && l.StoreItemID == line.StoreItemID {
			n += l.Quantity
		}
	}
	return n
}

// lineLimit is the most a line may hold, nil when nothing limits it: the
// variant's tracked stock, what the item's tracked stock leaves after the
// item's other lines, and 1 for subscriptions.
func lineLimit(it *StoreItem, v *VariantView, others int64) *int64 {
	var limit *int64
	lower := func(n int64) {
		if n < 0 {
			n = 0
		}
		if limit == nil || n < *limit {
			limit = &n
		}
	}
	if it.Stock != nil {
		lower(*it.Stock - others)
	}
	if v != nil && v.Stock != nil {
		lower(*v.Stock)
	}
	if it.Type == ItemSubscription {
		lower(1)
	}
	return limit
}

// stockError explains why quantity is refused.
func stockError(limit int64) error {
	if limit <= 0 {
		return invalid("This item is out of stock")
	}
	return invalid("Only " + strconv.FormatInt(limit, 10) + " available")
}

// lockCart returns the member's active cart in shop, created when create is
// set, locked for the rest of tx so concurrent writes to one cart run one
// after the other (SQLite locks the whole file on the first write anyway).
func lockCart(ctx context.Context, tx bun.Tx, shop *Shop, userID string, create bool) (*Cart, error) {
	now := time.Now().UTC()
	if create {
		fresh := &Cart{ID: NewID(), AppID: shop.AppID, StoreID: shop.ID, UserID: userID, Status: CartActive,
			ExpiresAt: now.Add(CartLifetime), CreatedAt: now, UpdatedAt: now}
		if _, err := tx.NewInsert().Model(fresh).
			On("CONFLICT (store_id, user_id) WHERE status = 'ACTIVE' DO NOTHING").Exec(ctx); err != nil {
			return nil, fmt.Errorf("create cart: %w", err)
		}
	} else if tx.Dialect().Name() == dialect.SQLite {
		// Take SQLite's write lock first, so the read below cannot be
		// overtaken by another writer.
		if _, err := tx.ExecContext(ctx, "UPDATE carts SET status = status WHERE 0"); err != nil {
			return nil, fmt.Errorf("lock cart: %w", err)
		}
	}
	cart := new(Cart)
	q := tx.NewSelect().Model(cart).Where("store_id = ? AND user_id = ? AND status = ?", shop.ID, userID, CartActive)
	if tx.Dialect().Name() == dialect.PG {
		q = q.For("UPDATE")
	}
	if err := selectOne(ctx, q, "cart"); err != nil {
		return nil, err
	}
	return cart, nil
}

func touchCart(ctx context.Context, tx bun.Tx, cart *Cart) error {
	now := time.Now().UTC()
	cart.UpdatedAt, cart.ExpiresAt = now, now.Add(CartLifetime)
	if _, err := tx.NewUpdate().Model(cart).Column("updated_at", "expires_at").WherePK().Exec(ctx); err != nil {
		return fmt.Errorf("touch cart: %w", err)
	}
	return nil
}

// AddToCart adds quantity of an item (and variant) to the member's cart. The
// same item and variant merges into one line. The new quantity may not pass
// the tracked stock; the item must be live and in shop, and the variant the
// item's own.
func (s *Storage) AddToCart(ctx context.Context, shop *Shop, userID, itemID string, variantID *string, quantity int64) (*CartView, error) {
	var view *CartView
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		cart, err := lockCart(ctx, tx, shop, userID, true)
		if err != nil {
			return err
		}
		it := new(StoreItem)
		err = selectOne(ctx, tx.NewSelect().Model(it).Where("id = ? AND store_id = ? AND deleted_at IS NULL", itemID, shop.ID), "item")
		if errors.Is(err, ErrNotFound) {
			return invalid("Item not found")
		}
		if err != nil {
			return err
		}
		if it.Type == ItemSubscription {
			// A draft or archived tier is bought by no path.
			if _, err := tierOnSale(ctx, tx, shop.AppID, it.ID); errors.Is(err, ErrNotFound) {
				return invalid("Item not found")
			} else if err != nil {
				return err
			}
		}
		var variant *VariantView
		if variantID != nil {
			v := new(Variant)
			err := selectOne(ctx, tx.NewSelect().Model(v).Where("id = ? AND store_item_id = ? AND deleted_at IS NULL", *variantID, it.ID), "variant")
			if errors.Is(err, ErrNotFound) {
				return invalid("Variant not found")
			}
			if err != nil {
				return err
			}
			variant = &VariantView{ID: v.ID, Stock: v.Stock, PriceAdjustment: v.PriceAdjustment}
		} else if err := requireNoVariants(ctx, tx, it); err != nil {
			return err
		}
		var lines []CartItem
		if err := tx.NewSelect().Model(&lines).Where("cart_id = ?", cart.ID).Scan(ctx); err != nil {
			return fmt.Errorf("load cart lines: %w", err)
		}
		var line *CartItem
		for i := range lines {
			l := &lines[i]
			if l.StoreItemID == it.ID && sameVariant(l.VariantID, variantID) {
				line = l
			}
		}
		if line == nil {
			if len(lines) >= maxCartLineCount {
				return invalid("Your cart is full")
			}
			line = &CartItem{ID: NewID(), AppID: shop.AppID, CartID: cart.ID, StoreItemID: it.ID, VariantID: variantID,
				CreatedAt: time.Now().UTC()}
		}
		want := line.Quantity + quantity
		if limit := lineLimit(it, variant, otherQuantity(lines, *line)); limit != nil && want > *limit {
			if it.Type == ItemSubscription && *limit >= 1 {
				return invalid("Subscriptions can only be added once")
			}
			return stockError(*limit - line.Quantity)
		}
		line.Quantity = want
		if line.Quantity == quantity {
			_, err = tx.NewInsert().Model(line).Exec(ctx)
		} else {
			_, err = tx.NewUpdate().Model(line).Column("quantity").WherePK().Exec(ctx)
		}
		if err != nil {
			return fmt.Errorf("save cart line: %w", err)
		}
		if err := touchCart(ctx, tx, cart); err != nil {
			return err
		}
		view, err = s.cartView(ctx, tx, shop, cart)
		return err
	})
	return view, err
}

// requireNoVariants refuses a line without a variant for an item that has
// live variants: a hoodie ordered with no size cannot be shipped, so the
// buyer is asked, never guessed for (ErrInvalid on field variantId).
func requireNoVariants(ctx context.Context, db bun.IDB, it *StoreItem) error {
	var names []string
	if err := db.NewSelect().Model((*Variant)(nil)).Column("name").
		Where("store_item_id = ? AND deleted_at IS NULL", it.ID).Order("position ASC", "id ASC").Limit(1).
		Scan(ctx, &names); err != nil {
		return fmt.Errorf("check variants of %s: %w", it.ID, err)
	}
	if len(names) == 0 {
		return nil
	}
	return &ErrInvalid{Msg: ChooseVariantMessage(names[0], it.Name), Field: "variantId"}
}

// ChooseVariantMessage is the one wording of a missing variant, for the
// API and the item page alike: "Please choose a size for Lighthouse Hoodie".
func ChooseVariantMessage(variantName, itemName string) string {
	name := strings.ToLower(strings.TrimSpace(variantName))
	if name == "" {
		name = "option"
	}
	return "Please choose a " + name + " for " + itemName
}

func sameVariant(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// UpdateCartLine sets a line's quantity; 0 or less removes it (SPEC.md
// section 4). A line of a deleted item may only go down.
func (s *Storage) UpdateCartLine(ctx context.Context, shop *Shop, userID, lineID string, quantity int64) (*CartView, error) {
	var view *CartView
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		cart, err := lockCart(ctx, tx, shop, userID, false)
		if err != nil {
			return err
		}
		var lines []CartItem
		if err := tx.NewSelect().Model(&lines).Where("cart_id = ?", cart.ID).Scan(ctx); err != nil {
			return fmt.Errorf("load cart lines: %w", err)
		}
		var line *CartItem
		for i := range lines {
			if lines[i].ID == lineID {
				line = &lines[i]
			}
		}
		if line == nil {
			return ErrNotFound
		}
		if quantity <= 0 {
			if _, err := tx.NewDelete().Model(line).WherePK().Exec(ctx); err != nil {
				return fmt.Errorf("remove cart line: %w", err)
			}
		} else {
			if quantity > line.Quantity {
				it := new(StoreItem)
				if err := selectOne(ctx, tx.NewSelect().Model(it).Where("id = ?", line.StoreItemID), "item"); err != nil {
					return err
				}
				if it.DeletedAt != nil {
					return invalid("This item is no longer available")
				}
				var variant *VariantView
				if line.VariantID != nil {
					v := new(Variant)
					err := selectOne(ctx, tx.NewSelect().Model(v).Where("id = ?", *line.VariantID), "variant")
					if err != nil && !errors.Is(err, ErrNotFound) {
						return err
					}
					if err != nil || v.DeletedAt != nil {
						return invalid("This option is no longer available")
					}
					variant = &VariantView{ID: v.ID, Stock: v.Stock}
				}
				if limit := lineLimit(it, variant, otherQuantity(lines, *line)); limit != nil && quantity > *limit {
					return stockError(*limit)
				}
			}
			line.Quantity = quantity
			if _, err := tx.NewUpdate().Model(line).Column("quantity").WherePK().Exec(ctx); err != nil {
				return fmt.Errorf("update cart line: %w", err)
			}
		}
		if err := touchCart(ctx, tx, cart); err != nil {
			return err
		}
		view, err = s.cartView(ctx, tx, shop, cart)
		return err
	})
	return view, err
}

// RemoveCartLine deletes one line of the member's cart (ErrNotFound when the
// line is not in it).
func (s *Storage) RemoveCartLine(ctx context.Context, shop *Shop, userID, lineID string) (*CartView, error) {
	return s.UpdateCartLine(ctx, shop, userID, lineID, 0)
}

// ClearCart empties the member's active cart; no cart is already clear.
func (s *Storage) ClearCart(ctx context.Context, shop *Shop, userID string) error {
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		cart, err := lockCart(ctx, tx, shop, userID, false)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := tx.NewDelete().Model((*CartItem)(nil)).Where("cart_id = ?", cart.ID).Exec(ctx); err != nil {
			return fmt.Errorf("clear cart: %w", err)
		}
		return touchCart(ctx, tx, cart)
	})
}
