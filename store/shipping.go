package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// ShippingZone is one of an app's shipping zones (issue 43 item 4): the
// countries it covers and what shipping there costs, in cents. An order
// of physical items pays FlatRate, plus PerItem for each physical item
// after the first, or nothing when its subtotal reaches FreeOver (0: never
// free).
type ShippingZone struct {
	bun.BaseModel `bun:"table:shipping_zones"`

	ID        string    `bun:",pk" json:"id"`
	AppID     string    `bun:",notnull" json:"-"`
	Name      string    `bun:",notnull" json:"name"`
	FlatRate  int64     `bun:",notnull,default:0" json:"flatRate"`
	PerItem   int64     `bun:",notnull,default:0" json:"perItem"`
	FreeOver  int64     `bun:",notnull,default:0" json:"freeOver"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
	UpdatedAt time.Time `bun:",notnull,default:current_timestamp" json:"updatedAt"`
	// Countries are its ISO codes, by code (shipping_zone_countries).
	Countries []string `bun:"-" json:"countries"`
}

// ShippingZoneCountry puts a country in a zone; (app, country) is the key,
// so a country is in one zone of an app at most.
type ShippingZoneCountry struct {
	bun.BaseModel `bun:"table:shipping_zone_countries"`

	AppID   string `bun:",pk"`
	Country string `bun:",pk"`
	ZoneID  string `bun:",notnull"`
}

// Rate is what an order with qty physical items and this subtotal pays for
// shipping in the zone: nothing without physical items or at FreeOver and
// above, else FlatRate and PerItem for every item after the first.
func (z ShippingZone) Rate(qty, subtotal int64) int64 {
	if qty <= 0 || (z.FreeOver > 0 && subtotal >= z.FreeOver) {
		return 0
	}
	return z.FlatRate + z.PerItem*(qty-1)
}

// MaxShippingRate caps each amount of a zone ($10,000).
const MaxShippingRate = 1_000_000

// ShippingZoneInput is the studio's zone form and the JSON call's body.
type ShippingZoneInput struct {
	Name      string   `json:"name"`
	Countries []string `json:"countries"`
	FlatRate  int64    `json:"flatRate"`
	PerItem   int64    `json:"perItem"`
	FreeOver  int64    `json:"freeOver"`
}

// ErrCountryInZone: a country the zone lists is in another of the app's
// zones already (its message names both).
type ErrCountryInZone struct{ Country, Zone string }

func (e *ErrCountryInZone) Error() string {
	return CountryName(e.Country) + " is in the zone " + e.Zone + " already"
}

// normalize checks the input, answering the field at fault.
func (in *ShippingZoneInput) normalize() error {
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" {
		return &ErrInvalid{Msg: "Name the zone", Field: "name"}
	}
	if len(in.Name) > 80 || !OneLine(in.Name) {
		return &ErrInvalid{Msg: "The name is one line of at most 80 characters", Field: "name"}
	}
	seen := map[string]bool{}
	var codes []string
	for _, c := range in.Countries {
		c = strings.ToUpper(strings.TrimSpace(c))
		if c == "UK" {
			c = "GB"
		}
		if c == "" || seen[c] {
			continue
		}
		if CountryName(c) == "" {
			return &ErrInvalid{Msg: c + " is not a country code", Field: "countries"}
		}
		seen[c] = true
		codes = append(codes, c)
	}
	if len(codes) == 0 {
		return &ErrInvalid{Msg: "Choose at least one country", Field: "countries"}
	}
	sort.Strings(codes)
	in.Countries = codes
	for _, f := range []struct {
		v     int64
		field string
	}{{in.FlatRate, "flatRate"}, {in.PerItem, "perItem"}, {in.FreeOver, "freeOver"}} {
		if f.v < 0 || f.v > MaxShippingRate {
			return &ErrInvalid{Msg: "Between $0 and $10,000", Field: f.field}
		}
	}
	return nil
}

// ShippingZones lists an app's zones by name, each with its countries.
func (s *Storage) ShippingZones(ctx context.Context, appID string) ([]ShippingZone, error) {
	return shippingZones(ctx, s.db, appID)
}

func shippingZones(ctx context.Context, db bun.IDB, appID string) ([]ShippingZone, error) {
	zones := []ShippingZone{}
	if err := db.NewSelect().Model(&zones).Where("app_id = ?", appID).Order("name ASC", "id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load shipping zones: %w", err)
	}
	var links []ShippingZoneCountry
	if err := db.NewSelect().Model(&links).Where("app_id = ?", appID).Order("country ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load shipping countries: %w", err)
	}
	byZone := map[string][]string{}
	for _, l := range links {
		byZone[l.ZoneID] = append(byZone[l.ZoneID], l.Country)
	}
	for i := range zones {
		zones[i].Countries = byZone[zones[i].ID]
		if zones[i].Countries == nil {
			zones[i].Countries = []string{}
		}
	}
	return zones, nil
}

// SaveShippingZone creates (zoneID "") or replaces one of an app's zones,
// audited as settings.shipping. A country another zone holds is refused
// (ErrCountryInZone), also when two saves race for it: the key of
// shipping_zone_countries decides.
func (s *Storage) SaveShippingZone(ctx context.Context, appID, actorID, zoneID string, in ShippingZoneInput) (*ShippingZone, error) {
	if err := in.normalize(); err != nil {
		return nil, err
	}
	var zone *ShippingZone
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		now := time.Now().UTC()
		z := &ShippingZone{ID: zoneID, AppID: appID, Name: in.Name, FlatRate: in.FlatRate, PerItem: in.PerItem,
			FreeOver: in.FreeOver, CreatedAt: now, UpdatedAt: now, Countries: in.Countries}
		if zoneID == "" {
			z.ID = NewID()
			if _, err := tx.NewInsert().Model(z).Exec(ctx); err != nil {
				return fmt.Errorf("create shipping zone: %w", err)
			}
		} else {
			res, err := tx.NewUpdate().Model(z).Column("name", "flat_rate", "per_item", "free_over", "updated_at").
				Where("id = ? AND app_id = ?", zoneID, appID).Exec(ctx)
			if err != nil {
				return fmt.Errorf("save shipping zone: %w", err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return ErrNotFound
			}
			if _, err := tx.NewDelete().Model((*ShippingZoneCountry)(nil)).Where("zone_id = ?", zoneID).Exec(ctx); err != nil {
				return fmt.Errorf("save shipping zone: %w", err)
			}
		}
		var taken []ShippingZoneCountry
		if err := tx.NewSelect().Model(&taken).Where("app_id = ? AND country IN (?)", appID, bun.List(in.Countries)).
			Order("country ASC").Limit(1).Scan(ctx); err != nil {
			return fmt.Errorf("check shipping countries: %w", err)
		}
		if len(taken) > 0 {
			return countryTaken(ctx, tx, taken[0])
		}
		links := make([]ShippingZoneCountry, len(in.Countries))
		for i, c := range in.Countries {
			links[i] = ShippingZoneCountry{AppID: appID, Country: c, ZoneID: z.ID}
		}
		if _, err := tx.NewInsert().Model(&links).Exec(ctx); err != nil {
			if isUniqueViolation(err) {
				return &ErrCountryInZone{Country: in.Countries[0], Zone: "another zone"}
			}
			return fmt.Errorf("save shipping countries: %w", err)
		}
		zone = z
		return logAction(ctx, tx, ModerationEntry{AppID: appID, ActorID: actorID, Action: ActionShippingSettings,
			Reason: "zone " + z.Name + ": " + shippingSummary(z)})
	})
	if err != nil {
		var taken *ErrCountryInZone
		if errors.As(err, &taken) || isUniqueViolation(err) {
			if taken == nil {
				taken = &ErrCountryInZone{Country: in.Countries[0], Zone: "another zone"}
			}
			return nil, &ErrInvalid{Msg: taken.Error(), Field: "countries"}
		}
		return nil, err
	}
	return zone, nil
}

func countryTaken(ctx context.Context, tx bun.Tx, l ShippingZoneCountry) error {
	other := new(ShippingZone)
	if err := selectOne(ctx, tx.NewSelect().Model(other).Column("name").Where("id = ?", l.ZoneID), "zone"); err != nil {
		return err
	}
	return &ErrCountryInZone{Country: l.Country, Zone: other.Name}
}

// ActionShippingSettings is the audit log's line for a zone saved or
// deleted.
const ActionShippingSettings = "settings.shipping"

func shippingSummary(z *ShippingZone) string {
	return fmt.Sprintf("%s, %d cents per order, %d per extra item, free over %d", strings.Join(z.Countries, " "), z.FlatRate, z.PerItem, z.FreeOver)
}

// DeleteShippingZone removes one of an app's zones (and its countries).
func (s *Storage) DeleteShippingZone(ctx context.Context, appID, actorID, zoneID string) error {
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		z := new(ShippingZone)
		if err := selectOne(ctx, tx.NewSelect().Model(z).Where("id = ? AND app_id = ?", zoneID, appID), "zone"); err != nil {
			return err
		}
		if _, err := tx.NewDelete().Model((*ShippingZoneCountry)(nil)).Where("zone_id = ?", z.ID).Exec(ctx); err != nil {
			return fmt.Errorf("delete shipping zone: %w", err)
		}
		if _, err := tx.NewDelete().Model((*ShippingZone)(nil)).Where("id = ?", z.ID).Exec(ctx); err != nil {
			return fmt.Errorf("delete shipping zone: %w", err)
		}
		return logAction(ctx, tx, ModerationEntry{AppID: appID, ActorID: actorID, Action: ActionShippingSettings,
			Reason: "zone " + z.Name + " deleted"})
	})
}

// ShippingCountriesOf are the countries an app's checkout offers: those
// of its zones when it has any (it ships nowhere else), else every country
// (shipping is free everywhere, as before zones).
func (s *Storage) ShippingCountriesOf(ctx context.Context, appID string) ([]Country, error) {
	var codes []string
	if err := s.db.NewSelect().Model((*ShippingZoneCountry)(nil)).Column("country").Where("app_id = ?", appID).Scan(ctx, &codes); err != nil {
		return nil, fmt.Errorf("load shipping countries: %w", err)
	}
	if len(codes) == 0 {
		return Countries, nil
	}
	in := map[string]bool{}
	for _, c := range codes {
		in[c] = true
	}
	out := []Country{}
	for _, c := range Countries {
		if in[c.Code] {
			out = append(out, c)
		}
	}
	return out, nil
}

// shippingFor is what an order of app pays to ship qty physical items
// worth subtotal to country: 0 when the app has no zones; refused when it
// has some and none covers the country.
func shippingFor(ctx context.Context, db bun.IDB, appID, country string, qty, subtotal int64) (int64, error) {
	if qty <= 0 {
		return 0, nil
	}
	link := new(ShippingZoneCountry)
	err := selectOne(ctx, db.NewSelect().Model(link).Where("app_id = ? AND country = ?", appID, country), "shipping country")
	if errors.Is(err, ErrNotFound) {
		n, err := db.NewSelect().Model((*ShippingZone)(nil)).Where("app_id = ?", appID).Count(ctx)
		if err != nil {
			return 0, fmt.Errorf("count shipping zones: %w", err)
		}
		if n == 0 {
			return 0, nil
		}
		return 0, &ErrInvalid{Msg: "This store does not ship to " + CountryName(country), Field: "country"}
	}
	if err != nil {
		return 0, err
	}
	z := new(ShippingZone)
	if err := selectOne(ctx, db.NewSelect().Model(z).Where("id = ?", link.ZoneID), "shipping zone"); err != nil {
		return 0, err
	}
	return z.Rate(qty, subtotal), nil
}

// physicalOf counts an order's physical items.
func physicalOf(items []OrderItem) int64 {
	var n int64
	for _, it := range items {
		if it.Type == ItemPhysical {
			n += it.Quantity
		}
	}
	return n
}
