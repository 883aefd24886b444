package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// The operator's commands (`marquee user|app|sessions|jobs ...`) that are
// not a screen's: disabling accounts, listing and deleting apps, recording
// failed push deliveries, and pruning what is old.

// AppStatuses are the values an app's status may take: PUBLIC, or
// SUSPENDED by the operator (every page of it answers 404).
var AppStatuses = []string{"PUBLIC", AppSuspended}

// ErrUnknownStatus: `app set NAME status=X` with an X that is no status.
var ErrUnknownStatus = errors.New("unknown app status")

// CheckAppStatus answers the status spelled canonically, or an error that
// lists the accepted ones.
func CheckAppStatus(status string) (string, error) {
	for _, s := range AppStatuses {
		if strings.EqualFold(strings.TrimSpace(status), s) {
			return s, nil
		}
	}
	return "", fmt.Errorf("%w %q: want one of %s", ErrUnknownStatus, status, strings.Join(AppStatuses, ", "))
}

// SetUserDisabled disables an account (it cannot sign in, and every
// session of it ends on every instance at once) or enables it again. It
// answers how many sessions ended.
func (s *Storage) SetUserDisabled(ctx context.Context, userID string, disabled bool) (int, error) {
	var at *time.Time
	if disabled {
		now := time.Now().UTC()
		at = &now
	}
	var ended []string
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*User)(nil)).Set("disabled_at = ?", at).Set("updated_at = ?", time.Now().UTC()).
			Where("id = ? AND deleted_at IS NULL", userID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("disable user: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("user %s: %w", userID, ErrNotFound)
		}
		if !disabled {
			return nil
		}
		ended, err = deleteSessionsTx(ctx, tx, userID, "")
		return err
	})
	if err != nil {
		return 0, err
	}
	s.sessions.forgetUser(userID)
	return len(ended), s.forgetSessions(ctx, ended)
}

// AppSummary is one line of `marquee app list`.
type AppSummary struct {
	ID           string    `bun:"id"`
	Name         string    `bun:"name"`
	Status       string    `bun:"status"`
	Unpublished  bool      `bun:"unpublished"`
	CreatorEmail string    `bun:"creator_email"`
	Members      int       `bun:"members"`
	CreatedAt    time.Time `bun:"created_at"`
}

// ListApps lists every app, oldest first.
func (s *Storage) ListApps(ctx context.Context) ([]AppSummary, error) {
	var out []AppSummary
	err := s.db.NewSelect().TableExpr("apps AS a").
		ColumnExpr("a.id, a.name, a.status, a.unpublished, a.created_at").
		ColumnExpr("COALESCE(u.email, '') AS creator_email").
		ColumnExpr("(SELECT COUNT(*) FROM memberships AS m WHERE m.app_id = a.id) AS members").
		Join("LEFT JOIN users AS u ON u.id = a.creator_id").
		OrderExpr("a.created_at, a.name").Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("list apps: %w", err)
	}
	return out, nil
}

// DeleteApp removes an app and everything in it (the tables that belong to
// an app cascade from it); its name is free again. Its stored files (media
// with their resized copies, items' private files, unfinished uploads) are
// removed by delete_files jobs written in the same transaction, so they go
// even if the process stops right after. The CLI (marquee app delete) and
// the studio (DeleteAppAsCreator) both come here.
func (s *Storage) DeleteApp(ctx context.Context, idOrName string) (*App, error) {
	app, err := s.AppByIDOrName(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	err = s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, app.ID)
		keys, err := appFileKeys(ctx, tx, app.ID)
		if err != nil {
			return err
		}
		for len(keys) > 0 {
			n := min(len(keys), deleteFilesBatch)
			if err := enqueue(ctx, tx, JobDeleteFiles, DeleteFilesJob{Keys: keys[:n]}); err != nil {
				return err
			}
			keys = keys[n:]
		}
		if _, err := tx.NewDelete().Model((*App)(nil)).Where("id = ?", app.ID).Exec(ctx); err != nil {
			return fmt.Errorf("delete app %s: %w", app.Name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Its name may be taken again: the cached name -> id mapping goes.
	if err := s.cache.Delete(ctx, appIDKey(app.Name)); err != nil {
		s.cacheWarn("app id cache delete failed", err)
	}
	return app, nil
}

// PushFailure records a push delivery the push service refused or that
// could not reach it, for the operator (`marquee jobs failed`).
type PushFailure struct {
	bun.BaseModel `bun:"table:push_failures"`

	ID             string    `bun:",pk"`
	AppID          string    `bun:",notnull"`
	UserID         string    `bun:",notnull"`
	SubscriptionID string    `bun:",notnull"`
	NotificationID string    `bun:",notnull"`
	EndpointHost   string    `bun:",notnull,default:''"`
	Status         int32     `bun:",notnull,default:0"`
	Error          string    `bun:",notnull,default:''"`
	CreatedAt      time.Time `bun:",notnull,default:current_timestamp"`
}

// RecordPushFailure writes a failed delivery; status is the push service's
// answer (0 when none came), detail the error.
func (s *Storage) RecordPushFailure(ctx context.Context, sub PushSubscription, notificationID string, status int, detail string) error {
	host := ""
	if u, err := url.Parse(sub.Endpoint); err == nil {
		host = u.Host
	}
	if len(detail) > 500 {
		detail = detail[:500]
	}
	f := &PushFailure{ID: NewID(), AppID: sub.AppID, UserID: sub.UserID, SubscriptionID: sub.ID, NotificationID: notificationID,
		EndpointHost: host, Status: int32(status), Error: detail, CreatedAt: time.Now().UTC()}
	if _, err := s.db.NewInsert().Model(f).Exec(ctx); err != nil {
		return fmt.Errorf("record push failure: %w", err)
	}
	return nil
}

// RecentPushFailures lists the latest failed deliveries, newest first.
func (s *Storage) RecentPushFailures(ctx context.Context, limit int) ([]PushFailure, error) {
	var out []PushFailure
	if err := s.db.NewSelect().Model(&out).OrderExpr("created_at DESC, id DESC").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("list push failures: %w", err)
	}
	return out, nil
}

// Retention says how long what Prune removes is kept.
type Retention struct {
	// Notifications (NOTIFICATION_RETENTION): notifications older than
	// this are deleted, read or not, and failed push deliveries with them.
	Notifications time.Duration
}

// Pruned counts what one Prune removed.
type Pruned struct{ Notifications, Sessions, PushFailures int64 }

// Prune deletes notifications and failed push deliveries older than their
// retention, and sessions past their expiry (already refused at sign-in;
// this only takes the rows away). Finished jobs are river's to prune
// (JOB_RETENTION, jobs.Options).
func (s *Storage) Prune(ctx context.Context, r Retention, now time.Time) (Pruned, error) {
	var p Pruned
	before := now.Add(-r.Notifications)
	for _, step := range []struct {
		q    *bun.DeleteQuery
		into *int64
	}{
		{s.db.NewDelete().Model((*Notification)(nil)).Where("created_at < ?", before), &p.Notifications},
		{s.db.NewDelete().Model((*PushFailure)(nil)).Where("created_at < ?", before), &p.PushFailures},
		{s.db.NewDelete().Model((*Session)(nil)).Where("expires_at < ?", now), &p.Sessions},
	} {
		res, err := step.q.Exec(ctx)
		if err != nil {
			return p, fmt.Errorf("prune: %w", err)
		}
		*step.into, _ = res.RowsAffected()
	}
	return p, nil
}
