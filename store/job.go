package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// jobRow is a row of jobs (migration 0022).
type jobRow struct {
	Seq           int64 `gorm:"primaryKey;autoIncrement"`
	ID            string
	TenantID      string
	Kind          string
	Request       string
	Status        string
	Attempts      int
	Holder        string
	LeasedUntil   *time.Time
	ProgressDone  int
	ProgressTotal int
	Result        *string
	Error         string
	CreatedAt     time.Time
	StartedAt     *time.Time
	FinishedAt    *time.Time
}

func (jobRow) TableName() string { return "jobs" }

func (r *jobRow) toJob() *engram.Job {
	j := &engram.Job{ID: r.ID, Kind: r.Kind, Status: r.Status, Request: json.RawMessage(r.Request), Attempts: r.Attempts,
		Progress: engram.JobProgress{Done: r.ProgressDone, Total: r.ProgressTotal}, Error: r.Error,
		CreatedAt: r.CreatedAt.UTC(), StartedAt: utcPtr(r.StartedAt), FinishedAt: utcPtr(r.FinishedAt)}
	if r.Result != nil {
		j.Result = json.RawMessage(*r.Result)
	}
	return j
}

// CreateJob queues a job of kind for the tenant in ctx; request is its
// JSON input.
func (db *DB) CreateJob(ctx context.Context, kind string, request json.RawMessage) (*engram.Job, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	if len(request) == 0 {
		request = json.RawMessage("{}")
	}
	row := &jobRow{ID: newID("job"), TenantID: tenant, Kind: kind, Request: string(request), Status: engram.JobQueued,
		CreatedAt: db.now().UTC()}
	if err := db.retry(ctx, func() error { return db.w.WithContext(ctx).Create(row).Error }); err != nil {
		return nil, fmt.Errorf("store: create job: %w", err)
	}
	return row.toJob(), nil
}

// ClaimJob leases, and returns with its tenant, the oldest job that is queued, or running under a lease
// that ran out (its server died), to holder until now + lease, and counts
// the attempt. A job whose lease ran out after maxAttempts runs is failed
// instead of run again. It answers a nil job when there is nothing to run. On
// PostgreSQL the candidate is locked with SKIP LOCKED, so several servers
// claim different jobs; SQLite's one writer serialises the claims.
func (db *DB) ClaimJob(ctx context.Context, holder string, lease time.Duration, maxAttempts int) (*engram.Job, string, error) {
	var claimed *jobRow
	err := db.retry(ctx, func() error {
		claimed = nil
		return db.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			now := db.now().UTC()
			var row jobRow
			err := db.dialect.forUpdateSkipLocked(tx.Where("status = ? OR (status = ? AND leased_until < ?)",
				engram.JobQueued, engram.JobRunning, now).Order("seq")).Take(&row).Error
			switch {
			case errors.Is(err, gorm.ErrRecordNotFound):
				return nil
			case err != nil:
				return err
			}
			if row.Attempts >= maxAttempts {
				return tx.Model(&jobRow{}).Where("seq = ?", row.Seq).Updates(map[string]any{"status": engram.JobFailed,
					"holder": "", "leased_until": nil, "finished_at": now,
					"error": fmt.Sprintf("stopped after %d attempts: each server that ran it stopped before it finished", row.Attempts)}).Error
			}
			row.Status, row.Holder, row.Attempts = engram.JobRunning, holder, row.Attempts+1
			until := now.Add(lease)
			row.LeasedUntil = &until
			if row.StartedAt == nil {
				row.StartedAt = &now
			}
			if err := tx.Model(&jobRow{}).Where("seq = ?", row.Seq).Updates(map[string]any{"status": row.Status,
				"holder": holder, "attempts": row.Attempts, "leased_until": until, "started_at": *row.StartedAt}).Error; err != nil {
				return err
			}
			claimed = &row
			return nil
		})
	})
	if err != nil {
		return nil, "", fmt.Errorf("store: claim job: %w", err)
	}
	if claimed == nil {
		return nil, "", nil
	}
	return claimed.toJob(), claimed.TenantID, nil
}

// RenewJob writes a running job's progress and extends its lease, if
// holder still holds it; false means the lease was lost (another server
// took the job over) and the holder should stop.
func (db *DB) RenewJob(ctx context.Context, id, holder string, p engram.JobProgress, lease time.Duration) (bool, error) {
	var n int64
	err := db.retry(ctx, func() error {
		res := db.w.WithContext(ctx).Model(&jobRow{}).Where("id = ? AND holder = ? AND status = ?", id, holder, engram.JobRunning).
			Updates(map[string]any{"progress_done": p.Done, "progress_total": p.Total, "leased_until": db.now().UTC().Add(lease)})
		n = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return false, fmt.Errorf("store: renew job %s: %w", id, err)
	}
	return n == 1, nil
}

// FinishJob records a running job's outcome — result when it is done,
// message when it failed — if holder still holds it; false means the
// lease was lost and another run records the outcome.
func (db *DB) FinishJob(ctx context.Context, id, holder string, p engram.JobProgress, result json.RawMessage, message string) (bool, error) {
	upd := map[string]any{"status": engram.JobDone, "holder": "", "leased_until": nil, "finished_at": db.now().UTC(),
		"progress_done": p.Done, "progress_total": p.Total, "result": string(result), "error": ""}
	if message != "" {
		upd["status"], upd["result"], upd["error"] = engram.JobFailed, nil, message
	}
	var n int64
	err := db.retry(ctx, func() error {
		res := db.w.WithContext(ctx).Model(&jobRow{}).Where("id = ? AND holder = ? AND status = ?", id, holder, engram.JobRunning).Updates(upd)
		n = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return false, fmt.Errorf("store: finish job %s: %w", id, err)
	}
	return n == 1, nil
}

// ReleaseJobs puts the running jobs holder holds back in the queue, for a
// server that stops cleanly: another server (or the next start) runs them
// without waiting for the lease to run out.
func (db *DB) ReleaseJobs(ctx context.Context, holder string) error {
	err := db.retry(ctx, func() error {
		return db.w.WithContext(ctx).Model(&jobRow{}).Where("holder = ? AND status = ?", holder, engram.JobRunning).
			Updates(map[string]any{"status": engram.JobQueued, "holder": "", "leased_until": nil}).Error
	})
	if err != nil {
		return fmt.Errorf("store: release jobs: %w", err)
	}
	return nil
}

// FindJobByID returns one job of the tenant in ctx. ENOTFOUND.
func (db *DB) FindJobByID(ctx context.Context, id string) (*engram.Job, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	var row jobRow
	err = db.r.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenant, id).Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return nil, engram.Errorf(engram.ENOTFOUND, "job %q not found", id)
	case err != nil:
		return nil, fmt.Errorf("store: find job %s: %w", id, err)
	}
	return row.toJob(), nil
}

// FindJobs returns a page of the tenant's jobs, newest first. EINVALID for
// a bad limit, cursor or status.
func (db *DB) FindJobs(ctx context.Context, f engram.JobFilter) (*engram.JobPage, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := db.pageLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	fingerprint := "jobs\x1f" + tenant
	q := db.r.WithContext(ctx).Where("tenant_id = ?", tenant)
	if f.Status != nil {
		switch *f.Status {
		case engram.JobQueued, engram.JobRunning, engram.JobDone, engram.JobFailed:
		default:
			return nil, engram.Errorf(engram.EINVALID, "status must be queued, running, done or failed")
		}
		fingerprint += "\x1f" + *f.Status
		q = q.Where("status = ?", *f.Status)
	}
	after, err := db.decodeCursor(f.Cursor, fingerprint)
	if err != nil {
		return nil, err
	}
	if after > 0 {
		q = q.Where("seq < ?", after)
	}
	var rows []jobRow
	if err := q.Order("seq DESC").Limit(limit + 1).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: find jobs: %w", err)
	}
	items, next := seqPage(db, rows, limit, fingerprint, func(r *jobRow) int64 { return r.Seq }, (*jobRow).toJob)
	return &engram.JobPage{Items: items, NextCursor: next}, nil
}

// TenantMemories returns how many live memories the tenant in ctx holds,
// from tenant_usage (kept by triggers in every write's transaction): one
// row read, whatever the tenant's size.
func (db *DB) TenantMemories(ctx context.Context) (int64, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return 0, err
	}
	var n []int64
	if err := db.r.WithContext(ctx).Raw(`SELECT memories FROM tenant_usage WHERE tenant_id = ?`, tenant).Scan(&n).Error; err != nil {
		return 0, fmt.Errorf("store: count memories: %w", err)
	}
	if len(n) == 0 {
		return 0, nil
	}
	return n[0], nil
}
