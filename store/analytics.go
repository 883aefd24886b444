package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// The studio's analytics. Every figure is computed from the rows that
// record it, in UTC:
//
//   - revenue is counted when it was paid: an order's lines by their type
//     (SUBSCRIPTION lines are memberships, EVENT_TICKET lines tickets, the
//     rest orders) on the order's paid_at, wallet membership renewals on
//     their transfer, card and PayPal renewals on the provider's report
//     (payment_events RENEWED), paid donations on processed_at. Refunds are taken from
//     the period and source of the order they give back (an order that
//     mixes sources gives back from each in proportion, the remainder from
//     its largest), so a period shows what it sold and kept.
//   - members by role: the role each member held at the end of each period,
//     from the role history (role_changes: every join, role change, leave,
//     removal and ban); new members: joins in the period (one who left and
//     came back counts again); churned subscribers: members who stopped
//     being SUBSCRIBER in it by losing their paid membership or leaving
//     (back to FOLLOWER, or gone), not those promoted to a higher role.
//   - top posts, orders by status and attendance: posts, orders and events
//     created (events: starting) in the range.

// Analytics buckets.
const (
	BucketDay   = "day"
	BucketWeek  = "week"
	BucketMonth = "month"
)

// AnalyticsRange is [From, To) in UTC days, and the bucket size.
type AnalyticsRange struct {
	From, To time.Time
	Bucket   string
}

// Revenue sources.
const (
	SourceOrders      = "orders"
	SourceMemberships = "memberships"
	SourceDonations   = "donations"
	SourceTickets     = "tickets"
)

type RevenueRow struct {
	Period      string `json:"period"`
	Orders      int64  `json:"orders"`
	Memberships int64  `json:"memberships"`
	Donations   int64  `json:"donations"`
	Tickets     int64  `json:"tickets"`
	// Gross is what the period sold before refunds: Gross - Refunds = Net,
	// and the sources (already net of their refunds) add up to Net.
	Gross   int64 `json:"gross"`
	Refunds int64 `json:"refunds"`
	Net     int64 `json:"net"`
}

type MembersRow struct {
	Period      string `json:"period"`
	Followers   int    `json:"followers"`
	Subscribers int    `json:"subscribers"`
	Moderators  int    `json:"moderators"`
	Admins      int    `json:"admins"`
	Creators    int    `json:"creators"`
	NewMembers  int    `json:"newMembers"`
	Churned     int    `json:"churned"`
}

type TopPost struct {
	ID        string `json:"id"`
	Excerpt   string `json:"excerpt"`
	Author    string `json:"author"`
	Reactions int    `json:"reactions"`
	Comments  int    `json:"comments"`
}

type StatusCount struct {
	Status string `json:"status" tstype:"OrderStatus"`
	Count  int    `json:"count"`
}

type EventAttendance struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	StartDate time.Time `json:"startDate"`
	Attendees int       `json:"attendees"`
}

// Analytics is the studio's analytics screen and JSON.
type Analytics struct {
	From           string            `json:"from"`
	To             string            `json:"to"`
	Bucket         string            `json:"bucket"`
	Revenue        []RevenueRow      `json:"revenue"`
	RevenueTotal   RevenueRow        `json:"revenueTotal"`
	Members        []MembersRow      `json:"members"`
	TopPosts       []TopPost         `json:"topPosts"`
	OrdersByStatus []StatusCount     `json:"ordersByStatus"`
	Attendance     []EventAttendance `json:"attendance"`
	// Recurring is membership income as it stands now (not over the range).
	Recurring Recurring `json:"recurring"`
	// Trials and offers over the range (analytics_recurring.go).
	TrialsAndOffers TrialsAndOffers `json:"trialsAndOffers"`
	// PaidHistory is the last 12 calendar months of paying members by
	// tier and their churn (not the range: analytics_recurring.go).
	PaidHistory []PaidMonth `json:"paidHistory"`
}

// bucketStart is the start of the bucket holding t.
func bucketStart(t time.Time, bucket string) time.Time {
	t = t.UTC()
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch bucket {
	case BucketWeek:
		wd := (int(d.Weekday()) + 6) % 7 // Monday is 0
		return d.AddDate(0, 0, -wd)
	case BucketMonth:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return d
}

func nextBucket(t time.Time, bucket string) time.Time {
	switch bucket {
	case BucketWeek:
		return t.AddDate(0, 0, 7)
	case BucketMonth:
		return t.AddDate(0, 1, 0)
	}
	return t.AddDate(0, 0, 1)
}

func periodLabel(t time.Time, bucket string) string {
	if bucket == BucketMonth {
		return t.Format("2006-01")
	}
	return t.Format("2006-01-02")
}

// buckets lists the periods of the range, at most 400.
func (r AnalyticsRange) buckets() []time.Time {
	out := []time.Time{}
	for b := bucketStart(r.From, r.Bucket); b.Before(r.To) && len(out) < 400; b = nextBucket(b, r.Bucket) {
		out = append(out, b)
	}
	return out
}

// AppAnalytics computes the analytics of the app over the range.
func (s *Storage) AppAnalytics(ctx context.Context, appID string, r AnalyticsRange) (*Analytics, error) {
	if r.Bucket != BucketWeek && r.Bucket != BucketMonth {
		r.Bucket = BucketDay
	}
	a := &Analytics{From: r.From.Format("2006-01-02"), To: r.To.AddDate(0, 0, -1).Format("2006-01-02"), Bucket: r.Bucket}
	var err error
	if a.Revenue, a.RevenueTotal, err = s.revenue(ctx, appID, r); err != nil {
		return nil, err
	}
	if a.Members, err = s.membersOverTime(ctx, appID, r); err != nil {
		return nil, err
	}
	if a.TopPosts, err = s.topPosts(ctx, appID, r); err != nil {
		return nil, err
	}
	if a.OrdersByStatus, err = s.ordersByStatus(ctx, appID, r); err != nil {
		return nil, err
	}
	if a.Attendance, err = s.attendance(ctx, appID, r); err != nil {
		return nil, err
	}
	if a.Recurring, err = s.recurring(ctx, appID, time.Now()); err != nil {
		return nil, err
	}
	if a.TrialsAndOffers, err = s.trialsAndOffers(ctx, appID, r); err != nil {
		return nil, err
	}
	if a.PaidHistory, err = s.paidHistory(ctx, appID, time.Now()); err != nil {
		return nil, err
	}
	return a, nil
}

func sourceOfLine(itemType string) string {
	switch itemType {
	case ItemSubscription:
		return SourceMemberships
	case ItemEventTicket:
		return SourceTickets
	}
	return SourceOrders
}

func (row *RevenueRow) add(source string, cents int64) {
	switch source {
	case SourceOrders:
		row.Orders += cents
	case SourceMemberships:
		row.Memberships += cents
	case SourceDonations:
		row.Donations += cents
	case SourceTickets:
		row.Tickets += cents
	}
}

func (s *Storage) revenue(ctx context.Context, appID string, r AnalyticsRange) ([]RevenueRow, RevenueRow, error) {
	periods := r.buckets()
	rows := make([]RevenueRow, len(periods))
	index := map[string]int{}
	for i, p := range periods {
		rows[i].Period = periodLabel(p, r.Bucket)
		index[rows[i].Period] = i
	}
	at := func(t time.Time) *RevenueRow {
		if t.Before(r.From) || !t.Before(r.To) {
			return nil
		}
		if i, ok := index[periodLabel(bucketStart(t, r.Bucket), r.Bucket)]; ok {
			return &rows[i]
		}
		return nil
	}
	// Orders: their lines by source, and what was refunded of them.
	var lines []struct {
		OrderID  string    `bun:"order_id"`
		PaidAt   time.Time `bun:"paid_at"`
		Refunded int64     `bun:"refunded_amount"`
		Type     string    `bun:"type"`
		Amount   int64     `bun:"amount"`
	}
	if err := s.db.NewSelect().TableExpr("orders AS o").Join("JOIN order_items AS oi ON oi.order_id = o.id").
		ColumnExpr("o.id AS order_id, o.paid_at, o.refunded_amount, oi.type, oi.price * oi.quantity AS amount").
		Where("o.app_id = ? AND o.paid_at IS NOT NULL AND o.paid_at >= ? AND o.paid_at < ?", appID, r.From, r.To).
		OrderExpr("o.id, oi.id").Scan(ctx, &lines); err != nil {
		return nil, RevenueRow{}, fmt.Errorf("revenue of orders: %w", err)
	}
	type orderSum struct {
		paidAt   time.Time
		refunded int64
		bySource map[string]int64
	}
	orders := map[string]*orderSum{}
	orderIDs := []string{}
	for _, l := range lines {
		o := orders[l.OrderID]
		if o == nil {
			o = &orderSum{paidAt: l.PaidAt, refunded: l.Refunded, bySource: map[string]int64{}}
			orders[l.OrderID] = o
			orderIDs = append(orderIDs, l.OrderID)
		}
		o.bySource[sourceOfLine(l.Type)] += l.Amount
	}
	for _, id := range orderIDs {
		o := orders[id]
		row := at(o.paidAt)
		if row == nil {
			continue
		}
		var gross int64
		sources := []string{}
		for src, amt := range o.bySource {
			row.add(src, amt)
			gross += amt
			sources = append(sources, src)
		}
		if o.refunded <= 0 || gross <= 0 {
			continue
		}
		refund := o.refunded
		if refund > gross {
			refund = gross
		}
		row.Refunds += refund
		// Give back from each source in proportion; the remainder from
		// the largest (ties by name), so the parts add up exactly.
		sort.Slice(sources, func(i, j int) bool {
			if o.bySource[sources[i]] != o.bySource[sources[j]] {
				return o.bySource[sources[i]] > o.bySource[sources[j]]
			}
			return sources[i] < sources[j]
		})
		left := refund
		for _, src := range sources[1:] {
			part := refund * o.bySource[src] / gross
			row.add(src, -part)
			left -= part
		}
		row.add(sources[0], -left)
	}
	// Wallet renewals of memberships.
	var renewals []struct {
		At     time.Time `bun:"created_at"`
		Amount int64     `bun:"amount"`
	}
	if err := s.db.NewSelect().Model((*WalletTransfer)(nil)).Column("created_at", "amount").
		Where("app_id = ? AND kind = ? AND reference LIKE 'subscription:%' AND created_at >= ? AND created_at < ?", appID, TransferPayment, r.From, r.To).
		Scan(ctx, &renewals); err != nil {
		return nil, RevenueRow{}, fmt.Errorf("revenue of renewals: %w", err)
	}
	for _, x := range renewals {
		if row := at(x.At); row != nil {
			row.add(SourceMemberships, x.Amount)
		}
	}
	// Card and PayPal renewals: the provider's report of a paid period
	// (payment_events RENEWED, once per event), at the amount it charged
	// (the membership's price when the report carried none).
	var providerRenewals []struct {
		At     time.Time `bun:"created_at"`
		Amount int64     `bun:"amount"`
	}
	if err := s.db.NewSelect().TableExpr("payment_events AS e").
		Join("LEFT JOIN subscriptions AS s ON s.provider_ref = e.payment_ref AND e.payment_ref <> ''").
		ColumnExpr("e.created_at").ColumnExpr("CASE WHEN e.amount > 0 THEN e.amount ELSE COALESCE(s.amount, 0) END AS amount").
		Where("e.app_id = ? AND e.outcome = ? AND e.created_at >= ? AND e.created_at < ?", appID, OutcomeRenewed, r.From, r.To).
		Scan(ctx, &providerRenewals); err != nil {
		return nil, RevenueRow{}, fmt.Errorf("revenue of provider renewals: %w", err)
	}
	for _, x := range providerRenewals {
		if row := at(x.At); row != nil {
			row.add(SourceMemberships, x.Amount)
		}
	}
	var donations []struct {
		At     time.Time `bun:"processed_at"`
		Amount int64     `bun:"amount"`
	}
	if err := s.db.NewSelect().Model((*Donation)(nil)).Column("processed_at", "amount").
		Where("app_id = ? AND status = ? AND processed_at >= ? AND processed_at < ?", appID, DonationPaid, r.From, r.To).
		Scan(ctx, &donations); err != nil {
		return nil, RevenueRow{}, fmt.Errorf("revenue of donations: %w", err)
	}
	for _, x := range donations {
		if row := at(x.At); row != nil {
			row.add(SourceDonations, x.Amount)
		}
	}
	total := RevenueRow{Period: "Total"}
	for i := range rows {
		x := &rows[i]
		x.Net = x.Orders + x.Memberships + x.Donations + x.Tickets
		x.Gross = x.Net + x.Refunds
		total.Gross += x.Gross
		total.Orders += x.Orders
		total.Memberships += x.Memberships
		total.Donations += x.Donations
		total.Tickets += x.Tickets
		total.Refunds += x.Refunds
		total.Net += x.Net
	}
	return rows, total, nil
}

func (s *Storage) membersOverTime(ctx context.Context, appID string, r AnalyticsRange) ([]MembersRow, error) {
	var changes []RoleChange
	if err := s.db.NewSelect().Model(&changes).Where("app_id = ? AND created_at < ?", appID, r.To).
		OrderExpr("created_at ASC, id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("members over time: %w", err)
	}
	out := []MembersRow{}
	role := map[string]string{} // each member's role at the end of the period so far
	next := 0
	for _, start := range r.buckets() {
		end := nextBucket(start, r.Bucket)
		if end.After(r.To) {
			end = r.To
		}
		from := start
		if from.Before(r.From) {
			from = r.From
		}
		row := MembersRow{Period: periodLabel(start, r.Bucket)}
		for ; next < len(changes) && changes[next].CreatedAt.Before(end); next++ {
			c := changes[next]
			if role[c.UserID] == c.Role {
				continue
			}
			if !c.CreatedAt.Before(from) {
				if c.Previous == "" && c.Role != "" {
					row.NewMembers++
				}
				if c.Previous == RoleSubscriber && (c.Role == "" || c.Role == RoleFollower) {
					row.Churned++
				}
			}
			if c.Role == "" {
				delete(role, c.UserID)
			} else {
				role[c.UserID] = c.Role
			}
		}
		for _, rl := range role {
			switch rl {
			case RoleFollower:
				row.Followers++
			case RoleSubscriber:
				row.Subscribers++
			case RoleModerator:
				row.Moderators++
			case RoleAdmin:
				row.Admins++
			case RoleCreator:
				row.Creators++
			}
		}
		out = append(out, row)
	}
	return out, nil
}

func (s *Storage) topPosts(ctx context.Context, appID string, r AnalyticsRange) ([]TopPost, error) {
	var rows []struct {
		ID        string `bun:"id"`
		Content   string `bun:"content"`
		Author    string `bun:"username"`
		Reactions int    `bun:"reactions"`
		Comments  int    `bun:"comments"`
	}
	err := s.db.NewSelect().TableExpr("messages AS m").Join("JOIN users AS u ON u.id = m.sender_id").
		ColumnExpr("m.id, m.content, u.username").
		ColumnExpr("(SELECT COUNT(*) FROM reactions AS re WHERE re.message_id = m.id) AS reactions").
		ColumnExpr("(SELECT COUNT(*) FROM messages AS c WHERE c.parent_message_id = m.id) AS comments").
		Where("m.app_id = ? AND m.type = 'POST' AND m.created_at >= ? AND m.created_at < ?", appID, r.From, r.To).
		OrderExpr("(SELECT COUNT(*) FROM reactions AS re WHERE re.message_id = m.id) + (SELECT COUNT(*) FROM messages AS c WHERE c.parent_message_id = m.id) DESC, m.created_at DESC, m.id ASC").
		Limit(10).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("top posts: %w", err)
	}
	out := []TopPost{}
	for _, x := range rows {
		if x.Reactions+x.Comments == 0 {
			continue
		}
		ex := strings.TrimSpace(x.Content)
		if utf8.RuneCountInString(ex) > 80 {
			ex = string([]rune(ex)[:80]) + "…"
		}
		out = append(out, TopPost{ID: x.ID, Excerpt: ex, Author: x.Author, Reactions: x.Reactions, Comments: x.Comments})
	}
	return out, nil
}

func (s *Storage) ordersByStatus(ctx context.Context, appID string, r AnalyticsRange) ([]StatusCount, error) {
	var rows []StatusCount
	if err := s.db.NewSelect().Model((*Order)(nil)).ColumnExpr("status, COUNT(*) AS count").
		Where("app_id = ? AND created_at >= ? AND created_at < ?", appID, r.From, r.To).GroupExpr("status").Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("orders by status: %w", err)
	}
	counts := map[string]int{}
	for _, x := range rows {
		counts[x.Status] = x.Count
	}
	out := make([]StatusCount, 0, len(OrderStatuses))
	for _, st := range OrderStatuses {
		out = append(out, StatusCount{Status: st, Count: counts[st]})
	}
	return out, nil
}

func (s *Storage) attendance(ctx context.Context, appID string, r AnalyticsRange) ([]EventAttendance, error) {
	out := []EventAttendance{}
	err := s.db.NewSelect().TableExpr("events AS e").ColumnExpr("e.id, e.name, e.start_date").
		ColumnExpr("(SELECT COUNT(*) FROM attendees AS a WHERE a.event_id = e.id) AS attendees").
		Where("e.app_id = ? AND e.start_date >= ? AND e.start_date < ?", appID, r.From, r.To).
		OrderExpr("e.start_date ASC, e.id ASC").Limit(50).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("event attendance: %w", err)
	}
	return out, nil
}

// ExportOrders writes the app's orders created in the range as CSV rows.
func (s *Storage) ExportOrders(ctx context.Context, appID string, r AnalyticsRange) ([][]string, error) {
	var rows []struct {
		Number   string     `bun:"order_number"`
		Created  time.Time  `bun:"created_at"`
		PaidAt   *time.Time `bun:"paid_at"`
		Status   string     `bun:"status"`
		Username string     `bun:"username"`
		Email    string     `bun:"email"`
		Total    int64      `bun:"total"`
		Refunded int64      `bun:"refunded_amount"`
		Currency string     `bun:"currency"`
		Method   string     `bun:"payment_method"`
	}
	if err := s.db.NewSelect().TableExpr("orders AS o").Join("JOIN users AS u ON u.id = o.user_id").
		ColumnExpr("o.order_number, o.created_at, o.paid_at, o.status, u.username, u.email, o.total, o.refunded_amount, o.currency, o.payment_method").
		Where("o.app_id = ? AND o.created_at >= ? AND o.created_at < ?", appID, r.From, r.To).OrderExpr("o.created_at ASC, o.id ASC").
		Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("export orders: %w", err)
	}
	out := [][]string{{"order_number", "created_at", "paid_at", "status", "username", "email", "total", "refunded", "currency", "payment_method"}}
	for _, x := range rows {
		paid := ""
		if x.PaidAt != nil {
			paid = x.PaidAt.UTC().Format(time.RFC3339)
		}
		out = append(out, []string{x.Number, x.Created.UTC().Format(time.RFC3339), paid, x.Status, x.Username, x.Email,
			centsText(x.Total), centsText(x.Refunded), x.Currency, x.Method})
	}
	return out, nil
}

// ExportMembers writes every member of the app as CSV rows.
func (s *Storage) ExportMembers(ctx context.Context, appID string) ([][]string, error) {
	out := [][]string{{"username", "email", "role", "joined_at", "plan", "plan_status", "donor_tier", "donated"}}
	for page := 1; ; page++ {
		list, p, err := s.StudioMembers(ctx, appID, MemberFilter{Page: page, Limit: 100})
		if err != nil {
			return nil, err
		}
		for _, m := range list {
			out = append(out, []string{m.Username, m.Email, m.Role, m.JoinedAt.UTC().Format(time.RFC3339), m.Plan, m.PlanStatus, m.DonorTier, centsText(m.Donated)})
		}
		if !p.HasNext {
			return out, nil
		}
	}
}

// ExportDonations writes the app's donations made in the range as CSV rows.
func (s *Storage) ExportDonations(ctx context.Context, appID string, r AnalyticsRange) ([][]string, error) {
	var rows []struct {
		Created   time.Time  `bun:"created_at"`
		Processed *time.Time `bun:"processed_at"`
		Username  string     `bun:"username"`
		Email     string     `bun:"email"`
		Amount    int64      `bun:"amount"`
		Currency  string     `bun:"currency"`
		Status    string     `bun:"status"`
		Message   string     `bun:"message"`
	}
	if err := s.db.NewSelect().TableExpr("donations AS d").Join("JOIN users AS u ON u.id = d.user_id").
		ColumnExpr("d.created_at, d.processed_at, u.username, u.email, d.amount, d.currency, d.status, d.message").
		Where("d.app_id = ? AND d.created_at >= ? AND d.created_at < ?", appID, r.From, r.To).OrderExpr("d.created_at ASC, d.id ASC").
		Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("export donations: %w", err)
	}
	out := [][]string{{"created_at", "paid_at", "username", "email", "amount", "currency", "status", "message"}}
	for _, x := range rows {
		paid := ""
		if x.Processed != nil {
			paid = x.Processed.UTC().Format(time.RFC3339)
		}
		out = append(out, []string{x.Created.UTC().Format(time.RFC3339), paid, x.Username, x.Email, centsText(x.Amount), x.Currency, x.Status, x.Message})
	}
	return out, nil
}

func centsText(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}
