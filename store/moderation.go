package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/uptrace/bun"
)

// What members can report (issue 26).
const (
	TargetPost    = "POST"
	TargetComment = "COMMENT"
	TargetStory   = "STORY"
	TargetEvent   = "EVENT"
	TargetMember  = "MEMBER"
)

// ReportTargets lists the target types in the order forms show them.
var ReportTargets = []string{TargetPost, TargetComment, TargetStory, TargetEvent, TargetMember}

// Report reasons.
const (
	ReasonSpam       = "SPAM"
	ReasonHarassment = "HARASSMENT"
	ReasonIllegal    = "ILLEGAL"
	ReasonOther      = "OTHER"
)

// ReportReasons lists the reasons in the order forms show them.
var ReportReasons = []string{ReasonSpam, ReasonHarassment, ReasonIllegal, ReasonOther}

// Report statuses: OPEN until a moderator dismisses the target's reports
// or acts on it.
const (
	ReportOpen      = "OPEN"
	ReportDismissed = "DISMISSED"
	ReportActioned  = "ACTIONED"
)

// Why content is hidden ("" is visible). Hidden content is left out of every
// list; its page shows it only to its author (marked) and to moderators.
const (
	HiddenByReports   = "REPORTS"   // reached the app's report threshold
	HiddenByModerator = "MODERATOR" // a moderator hid it
	HiddenForApproval = "PENDING"   // a new account's post with links waits for approval
)

// DefaultReportThreshold is how many distinct members' reports hide content
// until reviewed when the app sets no threshold.
const DefaultReportThreshold = 3

// Report is one member's report of one target; a member reports a target
// once (report_once).
type Report struct {
	bun.BaseModel `bun:"table:reports"`

	ID           string     `bun:",pk" json:"id"`
	AppID        string     `bun:",notnull,unique:report_once" json:"-"`
	ReporterID   string     `bun:",notnull,unique:report_once" json:"-"`
	TargetType   string     `bun:",notnull,unique:report_once" json:"targetType"`
	TargetID     string     `bun:",notnull,unique:report_once" json:"targetId"`
	TargetUserID string     `bun:",notnull" json:"-"`
	Reason       string     `bun:",notnull" json:"reason"`
	Text         string     `bun:",notnull,default:''" json:"text"`
	Status       string     `bun:",notnull,default:'OPEN'" json:"status"`
	CreatedAt    time.Time  `bun:",notnull,default:current_timestamp" json:"createdAt"`
	ResolvedAt   *time.Time `json:"-"`
}

// ModerationEntry is one line of an app's audit log: who did what to
// which target, when and why. ActorID "" is the system (a threshold).
type ModerationEntry struct {
	bun.BaseModel `bun:"table:moderation_log"`

	ID           string    `bun:",pk" json:"id"`
	AppID        string    `bun:",notnull" json:"-"`
	ActorID      string    `bun:",notnull,default:''" json:"actorId"`
	Action       string    `bun:",notnull" json:"action"`
	TargetType   string    `bun:",notnull,default:''" json:"targetType"`
	TargetID     string    `bun:",notnull,default:''" json:"targetId"`
	TargetUserID string    `bun:",notnull,default:''" json:"targetUserId"`
	Reason       string    `bun:",notnull,default:''" json:"reason"`
	CreatedAt    time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

// Audit actions.
const (
	ActionReportHide = "AUTO_HIDE" // the report threshold hid a target
	ActionDismiss    = "DISMISS"
	ActionHide       = "HIDE"
	ActionUnhide     = "UNHIDE"
	ActionDelete     = "DELETE"
	ActionWarn       = "WARN"
	ActionBan        = "BAN"
	ActionSilence    = "SILENCE"
	ActionLift       = "LIFT"
	ActionHold       = "HOLD"     // a new account's post held for approval
	ActionApprove    = "APPROVE"  // a held post let through
	ActionRole       = "ROLE"     // a role given or taken
	ActionSettings   = "SETTINGS" // the moderation rules changed
)

// ErrAlreadyReported: the member reported this target before.
var ErrAlreadyReported = errors.New("already reported")

// logAction writes one audit line through db (the action's transaction).
func logAction(ctx context.Context, db bun.IDB, e ModerationEntry) error {
	e.ID = NewID()
	if e.CreatedAt.IsZero() {
		e.CreatedAt = time.Now().UTC()
	}
	if _, err := db.NewInsert().Model(&e).Exec(ctx); err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	return nil
}

// LogAction writes an audit line on its own (a role change made elsewhere).
func (s *Storage) LogAction(ctx context.Context, e ModerationEntry) error {
	return logAction(ctx, s.db, e)
}

// ReportTarget is what a report points at, as the forms and the queue show it.
type ReportTarget struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	UserID string `json:"userId"`
	// Username is the author's (the member's, for a member).
	Username string `json:"username"`
	Summary  string `json:"summary"`
	// Link is the target's path inside the app ("/posts/ID"), "" for none.
	Link   string `json:"link"`
	Hidden string `json:"hidden"`
	// PostID is the post a comment belongs to.
	PostID string `json:"-"`
}

// LoadReportTarget finds a target of the app, or ErrNotFound: a target of
// another app is missing here, so apps never learn of each other's content.
func (s *Storage) LoadReportTarget(ctx context.Context, appID, targetType, id string) (*ReportTarget, error) {
	if !LooksLikeID(id) {
		return nil, ErrNotFound
	}
	t := &ReportTarget{Type: targetType, ID: id}
	switch targetType {
	case TargetPost, TargetComment, TargetStory:
		m := new(Message)
		if err := selectOne(ctx, s.db.NewSelect().Model(m).Where("id = ? AND app_id = ?", id, appID), "message "+id); err != nil {
			return nil, err
		}
		want := map[string]string{TargetPost: MessagePost, TargetComment: MessageReply, TargetStory: MessageStory}[targetType]
		if m.Type != want {
			return nil, ErrNotFound
		}
		t.UserID, t.Summary, t.Hidden = m.SenderID, Snippet(m.Content, 140), m.Hidden
		switch {
		case m.Type == MessagePost:
			t.Link, t.PostID = "/posts/"+m.ID, m.ID
		case m.Type == MessageReply && m.ParentMessageID != nil:
			t.PostID = *m.ParentMessageID
			var parent Message
			if err := s.db.NewSelect().Model(&parent).Column("id", "type", "parent_message_id").Where("id = ?", t.PostID).Scan(ctx); err == nil &&
				parent.Type == MessageReply && parent.ParentMessageID != nil {
				t.PostID = *parent.ParentMessageID
			}
			t.Link = "/posts/" + t.PostID
		}
		if t.Summary == "" {
			t.Summary = "(media only)"
		}
	case TargetEvent:
		e := new(Event)
		if err := selectOne(ctx, s.db.NewSelect().Model(e).Where("id = ? AND app_id = ?", id, appID), "event "+id); err != nil {
			return nil, err
		}
		t.UserID, t.Summary, t.Link, t.Hidden = e.CreatorID, Snippet(e.Name, 140), "/events/"+e.ID, e.Hidden
	case TargetMember:
		u := new(User)
		if err := selectOne(ctx, s.db.NewSelect().Model(u).Where("id = ?", id), "user "+id); err != nil {
			return nil, err
		}
		// A member is someone with a standing in the app: a membership, a
		// post, or a ban on record.
		n, err := s.db.NewSelect().Model((*Membership)(nil)).Where("app_id = ? AND user_id = ?", appID, id).Count(ctx)
		if err != nil {
			return nil, fmt.Errorf("member of app: %w", err)
		}
		if n == 0 {
			if n, err = s.db.NewSelect().Model((*Message)(nil)).Where("app_id = ? AND sender_id = ?", appID, id).Count(ctx); err != nil {
				return nil, fmt.Errorf("author in app: %w", err)
			}
		}
		if n == 0 {
			if n, err = s.db.NewSelect().Model((*Ban)(nil)).Where("app_id = ? AND user_id = ?", appID, id).Count(ctx); err != nil {
				return nil, fmt.Errorf("ban in app: %w", err)
			}
		}
		if n == 0 {
			return nil, ErrNotFound
		}
		t.UserID, t.Summary = u.ID, "@"+u.Username
	default:
		return nil, ErrNotFound
	}
	if t.Username == "" {
		var name string
		if err := s.db.NewSelect().Model((*User)(nil)).Column("username").Where("id = ?", t.UserID).Scan(ctx, &name); err == nil {
			t.Username = name
		}
	}
	return t, nil
}

// NewReport is what FileReport needs; the server has checked the reason.
type NewReport struct {
	AppID, ReporterID, Reason, Text string
	Target                          *ReportTarget
	// Threshold is the app's number of distinct reporters that hides the
	// target until reviewed (0: never).
	Threshold int
	// Allow, when set, is asked once the report is known to be new (in its
	// transaction, so concurrent repeats of one report ask once): an error
	// (the reporter's write limit) files nothing.
	Allow func(ctx context.Context) error
}

// ReportOutcome says what a report did.
type ReportOutcome struct {
	// Created is false when the member had reported the target before.
	Created bool
	// HiddenNow is true for the one report that crossed the threshold.
	HiddenNow bool
}

// heldReporter leaves out reports ("r") whose reporter is banned or
// silenced in the app at ?, by account or by the ban's e-mail key.
const heldReporter = `NOT EXISTS (SELECT 1 FROM bans AS rb WHERE rb.app_id = r.app_id AND (rb.ends_at IS NULL OR rb.ends_at > ?) AND
	(rb.user_id = r.reporter_id OR (rb.email <> '' AND rb.email = (SELECT ru.email FROM users AS ru WHERE ru.id = r.reporter_id))))`

// FileReport records a member's report once per target. When the open
// reports of distinct members reach the threshold, the target is hidden
// until a moderator reviews it: exactly once, however many reports arrive
// together (the target's row is locked first, so each report counts the
// ones committed before it, and the hide is a conditional update).
func (s *Storage) FileReport(ctx context.Context, n NewReport) (ReportOutcome, error) {
	var out ReportOutcome
	t := n.Target
	table := hidableTable(t.Type)
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if table != "" {
			// A no-op update takes the row lock on PostgreSQL (SQLite
			// serialises writers anyway).
			if _, err := tx.NewUpdate().Table(table).Set("hidden = hidden").Where("id = ?", t.ID).Exec(ctx); err != nil {
				return fmt.Errorf("lock report target: %w", err)
			}
		}
		r := &Report{ID: NewID(), AppID: n.AppID, ReporterID: n.ReporterID, TargetType: t.Type, TargetID: t.ID,
			TargetUserID: t.UserID, Reason: n.Reason, Text: n.Text, Status: ReportOpen, CreatedAt: time.Now().UTC()}
		res, err := tx.NewInsert().Model(r).On("CONFLICT DO NOTHING").Exec(ctx)
		if err != nil {
			return fmt.Errorf("insert report: %w", err)
		}
		if k, _ := res.RowsAffected(); k == 0 {
			return nil
		}
		out.Created = true
		if n.Allow != nil {
			if err := n.Allow(ctx); err != nil {
				return err
			}
		}
		if table == "" || n.Threshold <= 0 {
			return nil
		}
		// Reports of members banned or silenced in the app do not count:
		// a held member cannot hide others' posts by reporting them.
		reporters, err := tx.NewSelect().TableExpr("reports AS r").
			Where("r.app_id = ? AND r.target_type = ? AND r.target_id = ? AND r.status = ?", n.AppID, t.Type, t.ID, ReportOpen).
			Where(heldReporter, time.Now().UTC()).Count(ctx)
		if err != nil {
			return fmt.Errorf("count reports: %w", err)
		}
		if int(reporters) < n.Threshold {
			return nil
		}
		res, err = tx.NewUpdate().Table(table).Set("hidden = ?", HiddenByReports).Where("id = ? AND hidden = ''", t.ID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("hide reported target: %w", err)
		}
		if k, _ := res.RowsAffected(); k == 0 {
			return nil
		}
		out.HiddenNow = true
		return logAction(ctx, tx, ModerationEntry{AppID: n.AppID, Action: ActionReportHide, TargetType: t.Type, TargetID: t.ID,
			TargetUserID: t.UserID, Reason: fmt.Sprintf("%d reports", reporters)})
	})
	if err != nil {
		return out, err
	}
	if out.HiddenNow {
		s.visibilityChanged(ctx, n.AppID, t)
	}
	return out, nil
}

// hidableTable is the table whose hidden column a target type has ("" for
// members, who are banned rather than hidden).
func hidableTable(targetType string) string {
	switch targetType {
	case TargetPost, TargetComment, TargetStory:
		return "messages"
	case TargetEvent:
		return "events"
	}
	return ""
}

// visibilityChanged drops what showed (or left out) a target: the feed's
// cached total, the landing data and every cached page of the app.
func (s *Storage) visibilityChanged(ctx context.Context, appID string, t *ReportTarget) {
	if t.Type == TargetPost || t.Type == TargetStory {
		var communityID string
		if err := s.db.NewSelect().Model((*Message)(nil)).Column("community_id").Where("id = ?", t.ID).Scan(ctx, &communityID); err == nil {
			s.forgetFeedTotal(ctx, communityID, map[string]string{TargetPost: MessagePost, TargetStory: MessageStory}[t.Type])
		}
	}
	s.InvalidateLanding(ctx, appID)
}

// SetHidden hides (reason one of Hidden*) or shows ("") a target, closes its
// open reports, and writes the audit line, in one transaction.
func (s *Storage) SetHidden(ctx context.Context, appID, actorID string, t *ReportTarget, hidden, action, reason string) error {
	table := hidableTable(t.Type)
	if table == "" {
		return invalid("Members are banned, not hidden")
	}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		// A draft or a scheduled post is its author's to publish, never a
		// moderator's to show (or to hide: it is hidden already).
		if _, err := tx.NewUpdate().Table(table).Set("hidden = ?", hidden).Where("id = ? AND app_id = ?", t.ID, appID).
			Where("hidden NOT IN (?)", bun.List(unpublished)).Exec(ctx); err != nil {
			return fmt.Errorf("set hidden: %w", err)
		}
		status := ReportActioned
		if hidden == "" {
			status = ReportDismissed
		}
		if err := closeReports(ctx, tx, appID, t, status); err != nil {
			return err
		}
		return logAction(ctx, tx, ModerationEntry{AppID: appID, ActorID: actorID, Action: action, TargetType: t.Type,
			TargetID: t.ID, TargetUserID: t.UserID, Reason: reason})
	})
	if err != nil {
		return err
	}
	t.Hidden = hidden
	s.visibilityChanged(ctx, appID, t)
	return nil
}

func closeReports(ctx context.Context, db bun.IDB, appID string, t *ReportTarget, status string) error {
	now := time.Now().UTC()
	if _, err := db.NewUpdate().Model((*Report)(nil)).Set("status = ?", status).Set("resolved_at = ?", now).
		Where("app_id = ? AND target_type = ? AND target_id = ? AND status = ?", appID, t.Type, t.ID, ReportOpen).Exec(ctx); err != nil {
		return fmt.Errorf("close reports: %w", err)
	}
	return nil
}

// DismissReports closes a target's open reports as unfounded; content the
// threshold hid is shown again.
func (s *Storage) DismissReports(ctx context.Context, appID, actorID string, t *ReportTarget, reason string) error {
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if table := hidableTable(t.Type); table != "" {
			if _, err := tx.NewUpdate().Table(table).Set("hidden = ''").
				Where("id = ? AND app_id = ? AND hidden = ?", t.ID, appID, HiddenByReports).Exec(ctx); err != nil {
				return fmt.Errorf("unhide dismissed target: %w", err)
			}
		}
		if err := closeReports(ctx, tx, appID, t, ReportDismissed); err != nil {
			return err
		}
		return logAction(ctx, tx, ModerationEntry{AppID: appID, ActorID: actorID, Action: ActionDismiss, TargetType: t.Type,
			TargetID: t.ID, TargetUserID: t.UserID, Reason: reason})
	})
	if err != nil {
		return err
	}
	if t.Hidden == HiddenByReports {
		t.Hidden = ""
		s.visibilityChanged(ctx, appID, t)
	}
	return nil
}

// CloseReports marks a target's reports handled after a moderator deleted
// it (or banned its author) and writes the audit line.
func (s *Storage) CloseReports(ctx context.Context, appID, actorID string, t *ReportTarget, action, reason string) error {
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := closeReports(ctx, tx, appID, t, ReportActioned); err != nil {
			return err
		}
		return logAction(ctx, tx, ModerationEntry{AppID: appID, ActorID: actorID, Action: action, TargetType: t.Type,
			TargetID: t.ID, TargetUserID: t.UserID, Reason: reason})
	})
}

// Warn sends the target's author a notification from the moderators and
// writes the audit line; the target's reports count as handled.
func (s *Storage) Warn(ctx context.Context, appID, actorID string, t *ReportTarget, reason string) error {
	text := "A moderator warned you"
	if t.Type != TargetMember {
		text += " about your " + map[string]string{TargetPost: "post", TargetComment: "comment", TargetStory: "story", TargetEvent: "event"}[t.Type]
	}
	if reason != "" {
		text += ": " + Snippet(reason, 200)
	}
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if _, err := Notify(ctx, tx, Notice{AppID: appID, Kind: KindSystem, RecipientIDs: []string{t.UserID}, Text: text, Link: t.Link}); err != nil {
			return err
		}
		if err := closeReports(ctx, tx, appID, t, ReportActioned); err != nil {
			return err
		}
		return logAction(ctx, tx, ModerationEntry{AppID: appID, ActorID: actorID, Action: ActionWarn, TargetType: t.Type,
			TargetID: t.ID, TargetUserID: t.UserID, Reason: reason})
	})
}

// QueueItem is one target in the review queue with its open reports.
type QueueItem struct {
	Target  ReportTarget   `json:"target"`
	Count   int            `json:"count"`
	Reasons map[string]int `json:"reasons"`
	// Texts are the reporters' own words (reason OTHER and notes), newest first.
	Texts     []string  `json:"texts"`
	FirstAt   time.Time `json:"firstAt"`
	LatestAt  time.Time `json:"latestAt"`
	AuthorBan *Ban      `json:"authorBan"`
}

// queueLimit bounds how many open reports one queue load reads.
const queueLimit = 2000

// ModerationQueue groups an app's open reports by target, most reported
// first, and adds the posts held for approval (count 0).
func (s *Storage) ModerationQueue(ctx context.Context, appID string) ([]QueueItem, error) {
	var reports []Report
	if err := s.db.NewSelect().Model(&reports).Where("app_id = ? AND status = ?", appID, ReportOpen).
		OrderExpr("created_at DESC, id DESC").Limit(queueLimit).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load open reports: %w", err)
	}
	items := []QueueItem{}
	index := map[string]int{}
	for _, r := range reports {
		key := r.TargetType + ":" + r.TargetID
		i, ok := index[key]
		if !ok {
			i = len(items)
			index[key] = i
			items = append(items, QueueItem{Target: ReportTarget{Type: r.TargetType, ID: r.TargetID}, Reasons: map[string]int{},
				Texts: []string{}, LatestAt: r.CreatedAt})
		}
		it := &items[i]
		it.Count++
		it.Reasons[r.Reason]++
		if r.Text != "" && len(it.Texts) < 5 {
			it.Texts = append(it.Texts, r.Text)
		}
		it.FirstAt = r.CreatedAt
	}
	var held []Message
	if err := s.db.NewSelect().Model(&held).Column("id", "type").Where("app_id = ? AND hidden = ?", appID, HiddenForApproval).
		OrderExpr("created_at ASC").Limit(200).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load held posts: %w", err)
	}
	for _, m := range held {
		tt := map[string]string{MessagePost: TargetPost, MessageStory: TargetStory, MessageReply: TargetComment}[m.Type]
		if _, ok := index[tt+":"+m.ID]; ok {
			continue
		}
		items = append(items, QueueItem{Target: ReportTarget{Type: tt, ID: m.ID}, Reasons: map[string]int{}, Texts: []string{}})
	}
	out := items[:0]
	for _, it := range items {
		t, err := s.LoadReportTarget(ctx, appID, it.Target.Type, it.Target.ID)
		if errors.Is(err, ErrNotFound) {
			continue // deleted since it was reported
		}
		if err != nil {
			return nil, err
		}
		it.Target = *t
		if it.AuthorBan, err = s.BanOf(ctx, appID, t.UserID, "", time.Now()); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out, nil
}

// ModerationLogEntry is an audit line with the names the studio shows.
type ModerationLogEntry struct {
	ModerationEntry
	ActorName  string `json:"actorName"`
	TargetName string `json:"targetName"`
}

// ModerationLog lists an app's audit lines, newest first.
func (s *Storage) ModerationLog(ctx context.Context, appID string, page, limit int) ([]ModerationLogEntry, Pagination, error) {
	page, limit = ClampPage(page, limit)
	var rows []ModerationLogEntry
	total, err := s.db.NewSelect().TableExpr("moderation_log AS l").ColumnExpr("l.*").
		ColumnExpr("COALESCE(a.username, '') AS actor_name").ColumnExpr("COALESCE(t.username, '') AS target_name").
		Join("LEFT JOIN users AS a ON a.id = l.actor_id").Join("LEFT JOIN users AS t ON t.id = l.target_user_id").
		Where("l.app_id = ?", appID).OrderExpr("l.created_at DESC, l.id DESC").
		Limit(int64(limit)).Offset(int64((page-1)*limit)).ScanAndCount(ctx, &rows)
	if err != nil {
		return nil, Pagination{}, fmt.Errorf("load audit log: %w", err)
	}
	if rows == nil {
		rows = []ModerationLogEntry{}
	}
	return rows, NewPagination(page, limit, int(total)), nil
}

// MsgReportThreshold refuses a report threshold out of range.
const MsgReportThreshold = "The threshold is a number of members from 1 to 1000 (0 for the default, 3)"

// SetModerationSettings saves an app's moderation rules and writes the
// audit line.
func (s *Storage) SetModerationSettings(ctx context.Context, appID, actorID string, m ModerationSettings) error {
	// 0 is the default (DefaultReportThreshold), as stored settings read it
	// and api/openapi.yaml documents it.
	if m.ReportThreshold < 0 || m.ReportThreshold > 1000 {
		return &ErrInvalid{Msg: MsgReportThreshold, Field: "reportThreshold"}
	}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, appID)
		app := new(App)
		if err := selectOne(ctx, tx.NewSelect().Model(app).Where("id = ?", appID), "app "+appID); err != nil {
			return err
		}
		app.Settings.Moderation = m
		app.UpdatedAt = time.Now()
		if _, err := tx.NewUpdate().Model(app).Column("settings", "updated_at").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("save moderation settings: %w", err)
		}
		reason := fmt.Sprintf("report threshold %d, hold links from new accounts %t", m.Threshold(), m.HoldNewAccountLinks)
		return logAction(ctx, tx, ModerationEntry{AppID: appID, ActorID: actorID, Action: ActionSettings, Reason: reason})
	})
	if err != nil {
		return err
	}
	return nil
}
