package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Offers (issue 40 item 5): an app's codes for a percentage or an amount
// off a tier's price, for the first payment (ONCE), the first N months
// (REPEATING) or every payment (FOREVER), with an optional expiry, an
// optional redemption limit and an optional tier. A member redeems a code
// once (offer_redemptions is unique per code and member), and the limit is
// exact however many members race: the redemption is a conditional
// increment of offers.redemptions in the transaction that pays (or starts
// the trial), rolled back with it when anything else fails.

// Offer durations.
const (
	OfferOnce      = "ONCE"
	OfferRepeating = "REPEATING"
	OfferForever   = "FOREVER"
)

// Offer errors: each answers the member who typed the code why it does not
// apply.
var (
	ErrOfferUnknown    = errors.New("offer code unknown")
	ErrOfferExpired    = errors.New("offer code expired")
	ErrOfferUsedUp     = errors.New("offer code used up")
	ErrOfferRedeemed   = errors.New("offer code already redeemed by this member")
	ErrOfferNotForTier = errors.New("offer code not for this tier")
)

// Offer is one of an app's codes.
type Offer struct {
	bun.BaseModel `bun:"table:offers"`

	ID             string     `bun:",pk" json:"id"`
	AppID          string     `bun:",notnull" json:"-"`
	Code           string     `bun:",notnull" json:"code"`
	PercentOff     int64      `bun:",notnull,default:0" json:"percentOff"`
	AmountOff      int64      `bun:",notnull,default:0" json:"amountOff"`
	Duration       string     `bun:",notnull,default:'ONCE'" json:"duration" tstype:"'ONCE' | 'REPEATING' | 'FOREVER'"`
	DurationMonths int64      `bun:",notnull,default:0" json:"durationMonths"`
	ExpiresAt      *time.Time `json:"expiresAt"`
	// MaxRedemptions 0 is no limit.
	MaxRedemptions int64 `bun:",notnull,default:0" json:"maxRedemptions"`
	Redemptions    int64 `bun:",notnull,default:0" json:"redemptions"`
	// PlanID limits the code to one tier (nil: any).
	PlanID *string `json:"tierId"`
	Active bool    `bun:",notnull,default:true" json:"active"`
	// StripeCoupon is the coupon made for the code on Stripe (card renewals).
	StripeCoupon string    `bun:",notnull,default:''" json:"-"`
	CreatedAt    time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

// OfferRedemption is one member's use of a code.
type OfferRedemption struct {
	bun.BaseModel `bun:"table:offer_redemptions"`

	ID        string    `bun:",pk" json:"id"`
	OfferID   string    `bun:",notnull" json:"offerId"`
	AppID     string    `bun:",notnull" json:"-"`
	UserID    string    `bun:",notnull" json:"userId"`
	PlanID    string    `bun:",notnull" json:"tierId"`
	Method    string    `bun:",notnull,default:''" json:"method"`
	Discount  int64     `bun:",notnull,default:0" json:"discount"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

// OfferInput is the studio's offer form.
type OfferInput struct {
	Code           string     `json:"code"`
	PercentOff     int64      `json:"percentOff"`
	AmountOff      int64      `json:"amountOff"`
	Duration       string     `json:"duration" tstype:"'ONCE' | 'REPEATING' | 'FOREVER'"`
	DurationMonths int64      `json:"durationMonths"`
	ExpiresAt      *time.Time `json:"expiresAt"`
	MaxRedemptions int64      `json:"maxRedemptions"`
	TierID         *string    `json:"tierId"`
}

var offerCodeRe = regexp.MustCompile(`^[A-Z0-9][A-Z0-9_-]{2,31}$`)

// NormalizeOfferCode is how codes are stored and looked up: trimmed, upper case.
func NormalizeOfferCode(code string) string { return strings.ToUpper(strings.TrimSpace(code)) }

// CheckOffer validates an offer form.
func CheckOffer(in OfferInput) error {
	switch {
	case !offerCodeRe.MatchString(NormalizeOfferCode(in.Code)):
		return &ErrInvalid{Msg: "A code is 3 to 32 letters, digits, - or _", Field: "code"}
	case (in.PercentOff > 0) == (in.AmountOff > 0):
		return &ErrInvalid{Msg: "Give a percentage or an amount off (one of them)", Field: "percentOff"}
	case in.PercentOff < 0 || in.PercentOff > 99:
		return &ErrInvalid{Msg: "A percentage off is 1 to 99 (a free period is a trial)", Field: "percentOff"}
	case in.AmountOff < 0 || in.AmountOff > maxPrice:
		return &ErrInvalid{Msg: "An amount off is $0.01 to $100,000", Field: "amountOff"}
	case in.Duration != OfferOnce && in.Duration != OfferRepeating && in.Duration != OfferForever:
		return &ErrInvalid{Msg: "Duration must be ONCE, REPEATING or FOREVER", Field: "duration"}
	case in.Duration == OfferRepeating && (in.DurationMonths < 1 || in.DurationMonths > 36):
		return &ErrInvalid{Msg: "A repeating offer lasts 1 to 36 months", Field: "durationMonths"}
	case in.MaxRedemptions < 0 || in.MaxRedemptions > 1_000_000:
		return &ErrInvalid{Msg: "A redemption limit is 0 (none) to 1,000,000", Field: "maxRedemptions"}
	}
	return nil
}

// CreateOffer adds a code to the app (audited); a code the app already has
// is refused on its field.
func (s *Storage) CreateOffer(ctx context.Context, appID, actorID string, in OfferInput, now time.Time) (*Offer, error) {
	in.Code = NormalizeOfferCode(in.Code)
	if in.Duration == "" {
		in.Duration = OfferOnce
	}
	if err := CheckOffer(in); err != nil {
		return nil, err
	}
	if in.Duration != OfferRepeating {
		in.DurationMonths = 0
	}
	o := &Offer{ID: NewID(), AppID: appID, Code: in.Code, PercentOff: in.PercentOff, AmountOff: in.AmountOff,
		Duration: in.Duration, DurationMonths: in.DurationMonths, ExpiresAt: in.ExpiresAt, MaxRedemptions: in.MaxRedemptions,
		Active: true, CreatedAt: now.UTC()}
	if in.TierID != nil && *in.TierID != "" {
		n, err := s.db.NewSelect().Model((*SubscriptionPlan)(nil)).Where("id = ? AND app_id = ?", *in.TierID, appID).Count(ctx)
		if err != nil {
			return nil, fmt.Errorf("load tier: %w", err)
		}
		if n == 0 {
			return nil, &ErrInvalid{Msg: "Choose one of the app's tiers", Field: "tierId"}
		}
		o.PlanID = in.TierID
	}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(o).Exec(ctx); err != nil {
			if isUniqueViolation(err) {
				return &ErrInvalid{Msg: "The app already has this code", Field: "code"}
			}
			return fmt.Errorf("create offer: %w", err)
		}
		return writeAudit(ctx, tx, appID, actorID, "offer.create", "", o.Code+": "+o.Describe())
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// Describe words the offer: "50% off the first month".
func (o *Offer) Describe() string {
	off := fmt.Sprintf("%d%% off", o.PercentOff)
	if o.AmountOff > 0 {
		off = Money(o.AmountOff, WalletCurrency) + " off"
	}
	switch o.Duration {
	case OfferForever:
		return off + " every payment"
	case OfferRepeating:
		if o.DurationMonths == 1 {
			return off + " the first month"
		}
		return fmt.Sprintf("%s the first %d months", off, o.DurationMonths)
	}
	return off + " the first payment"
}

// OfferByID answers one offer, or ErrNotFound.
func (s *Storage) OfferByID(ctx context.Context, id string) (*Offer, error) {
	o := new(Offer)
	if err := selectOne(ctx, s.db.NewSelect().Model(o).Where("id = ?", id), "offer"); err != nil {
		return nil, err
	}
	return o, nil
}

// SetOfferActive turns a code off (or on again); redemptions made stay.
func (s *Storage) SetOfferActive(ctx context.Context, appID, actorID, offerID string, active bool) error {
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*Offer)(nil)).Set("active = ?", active).Where("id = ? AND app_id = ?", offerID, appID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("set offer active: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		action := "offer.deactivate"
		if active {
			action = "offer.activate"
		}
		return writeAudit(ctx, tx, appID, actorID, action, "", offerID)
	})
}

// StudioOffer is a code as the studio lists it, with who redeemed it.
type StudioOffer struct {
	Offer
	Description string `json:"description"`
	TierName    string `json:"tierName"`
	Expired     bool   `json:"expired"`
	// RedeemedBy lists the redemptions, newest first (at most 50).
	RedeemedBy []OfferRedeemer `json:"redeemedBy"`
}

// OfferRedeemer is one redemption as the studio shows it.
type OfferRedeemer struct {
	UserID   string    `json:"userId"`
	Username string    `json:"username"`
	Discount int64     `json:"discount"`
	Method   string    `json:"method"`
	At       time.Time `json:"at"`
}

// StudioOffers lists the app's codes, newest first, each with its
// redemptions.
func (s *Storage) StudioOffers(ctx context.Context, appID string, now time.Time) ([]StudioOffer, error) {
	var offers []Offer
	if err := s.db.NewSelect().Model(&offers).Where("app_id = ?", appID).OrderExpr("created_at DESC, id DESC").Limit(200).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load offers: %w", err)
	}
	tiers, err := s.GiftableTiers(ctx, appID)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, t := range tiers {
		names[t.ID] = t.Name
	}
	out := make([]StudioOffer, 0, len(offers))
	for _, o := range offers {
		so := StudioOffer{Offer: o, Description: o.Describe(), Expired: o.ExpiresAt != nil && !o.ExpiresAt.After(now),
			RedeemedBy: []OfferRedeemer{}}
		if o.PlanID != nil {
			so.TierName = names[*o.PlanID]
		}
		var rows []struct {
			UserID   string    `bun:"user_id"`
			Username string    `bun:"username"`
			Discount int64     `bun:"discount"`
			Method   string    `bun:"method"`
			At       time.Time `bun:"created_at"`
		}
		if err := s.db.NewSelect().TableExpr("offer_redemptions AS r").Join("LEFT JOIN users AS u ON u.id = r.user_id").
			ColumnExpr("r.user_id, COALESCE(u.username, '') AS username, r.discount, r.method, r.created_at").
			Where("r.offer_id = ?", o.ID).OrderExpr("r.created_at DESC, r.id DESC").Limit(50).Scan(ctx, &rows); err != nil {
			return nil, fmt.Errorf("load redemptions: %w", err)
		}
		for _, r := range rows {
			so.RedeemedBy = append(so.RedeemedBy, OfferRedeemer{UserID: r.UserID, Username: r.Username, Discount: r.Discount, Method: r.Method, At: r.At})
		}
		out = append(out, so)
	}
	return out, nil
}

// OfferQuote is what a code does to one tier's price for one member.
type OfferQuote struct {
	Offer *Offer `json:"-"`
	Code  string `json:"code"`
	// ListPrice is the tier's price for the cycle; Price the first payment
	// with the code; Discount the difference.
	ListPrice int64 `json:"listPrice"`
	Price     int64 `json:"price"`
	Discount  int64 `json:"discount"`
	// Description words the offer ("50% off the first month").
	Description string `json:"description"`
	// DiscountLeft is how many renewals after the first payment the code
	// still discounts (-1: all of them).
	DiscountLeft int64 `json:"-"`
}

// offerPrice is price with the offer.
func offerPrice(o *Offer, price int64) int64 {
	off := o.AmountOff
	if o.PercentOff > 0 {
		off = (price*o.PercentOff + 50) / 100
	}
	if off > price {
		off = price
	}
	return price - off
}

// discountLeft is how many renewals after the first payment an offer
// discounts in cycle: none for ONCE, all for FOREVER, and for REPEATING the
// payments that start within its months (a yearly membership's first year
// is the one discounted).
func discountLeft(o *Offer, cycle string) int64 {
	switch o.Duration {
	case OfferForever:
		return -1
	case OfferRepeating:
		if cycle == CycleYearly {
			return (o.DurationMonths - 1) / 12
		}
		return o.DurationMonths - 1
	}
	return 0
}

// checkOffer answers why the offer cannot be used by userID on planID now,
// or nil.
func checkOfferUse(ctx context.Context, db bun.IDB, o *Offer, userID, planID string, now time.Time) error {
	switch {
	case !o.Active:
		return ErrOfferUnknown
	case o.ExpiresAt != nil && !o.ExpiresAt.After(now):
		return ErrOfferExpired
	case o.MaxRedemptions > 0 && o.Redemptions >= o.MaxRedemptions:
		return ErrOfferUsedUp
	case o.PlanID != nil && *o.PlanID != planID:
		return ErrOfferNotForTier
	}
	n, err := db.NewSelect().Model((*OfferRedemption)(nil)).Where("offer_id = ? AND user_id = ?", o.ID, userID).Count(ctx)
	if err != nil {
		return fmt.Errorf("load redemption: %w", err)
	}
	if n > 0 {
		return ErrOfferRedeemed
	}
	return nil
}

// QuoteOffer answers what code does to the tier of itemID in cycle for the
// member (userID may be empty for a visitor), or why it does not apply.
func (s *Storage) QuoteOffer(ctx context.Context, appID, userID, itemID, cycle, code string, now time.Time) (*OfferQuote, error) {
	tier, err := tierOnSale(ctx, s.db, appID, itemID)
	if err != nil {
		return nil, err
	}
	cycle, price, err := tier.price(cycle)
	if err != nil {
		return nil, err
	}
	return quoteOffer(ctx, s.db, appID, userID, tier.ID, cycle, price, code, now)
}

func quoteOffer(ctx context.Context, db bun.IDB, appID, userID, planID, cycle string, price int64, code string, now time.Time) (*OfferQuote, error) {
	o := new(Offer)
	if err := selectOne(ctx, db.NewSelect().Model(o).Where("app_id = ? AND code = ?", appID, NormalizeOfferCode(code)), "offer"); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, ErrOfferUnknown
		}
		return nil, err
	}
	if err := checkOfferUse(ctx, db, o, userID, planID, now); err != nil {
		return nil, err
	}
	p := offerPrice(o, price)
	if p <= 0 {
		return nil, ErrOfferNotForTier // worth the whole price: meant for a dearer tier
	}
	return &OfferQuote{Offer: o, Code: o.Code, ListPrice: price, Price: p, Discount: price - p, Description: o.Describe(),
		DiscountLeft: discountLeft(o, cycle)}, nil
}

// redeemOffer records the member's use of the offer in tx: the conditional
// increment makes the limit exact, the unique key makes it once per member.
// strict false (a card already charged at the discounted price) records
// the redemption even past the limit or the expiry.
func redeemOffer(ctx context.Context, tx bun.Tx, offerID, appID, userID, planID, method string, discount int64, now time.Time, strict bool) error {
	q := tx.NewUpdate().Model((*Offer)(nil)).Set("redemptions = redemptions + 1").Where("id = ? AND app_id = ?", offerID, appID)
	if strict {
		q = q.Where("active = ?", true).Where("(max_redemptions = 0 OR redemptions < max_redemptions)").
			Where("(expires_at IS NULL OR expires_at > ?)", now)
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return fmt.Errorf("redeem offer: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		o := new(Offer)
		if err := selectOne(ctx, tx.NewSelect().Model(o).Where("id = ?", offerID), "offer"); err != nil {
			return ErrOfferUnknown
		}
		if err := checkOfferUse(ctx, tx, o, userID, planID, now); err != nil {
			return err
		}
		return ErrOfferUsedUp
	}
	r := &OfferRedemption{ID: NewID(), OfferID: offerID, AppID: appID, UserID: userID, PlanID: planID, Method: method,
		Discount: discount, CreatedAt: now}
	if strict {
		if _, err := tx.NewInsert().Model(r).Exec(ctx); err != nil {
			if isUniqueViolation(err) {
				return ErrOfferRedeemed
			}
			return fmt.Errorf("record redemption: %w", err)
		}
		return nil
	}
	if _, err := tx.NewInsert().Model(r).On("CONFLICT (offer_id, user_id) DO NOTHING").Exec(ctx); err != nil {
		return fmt.Errorf("record redemption: %w", err)
	}
	return nil
}

// orderLineOffer is what a membership order line says about its code (its
// options, written by CreateTierOrder).
type orderLineOffer struct {
	Cycle        string `json:"cycle"`
	Offer        string `json:"offer,omitempty"`
	List         int64  `json:"list,omitempty"`
	DiscountLeft int64  `json:"discountLeft,omitempty"`
}
