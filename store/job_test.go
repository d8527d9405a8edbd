package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestJobLifecycle: a queued job is claimed by one server at a time; its
// holder writes progress and renews the lease; a dead holder's job is
// claimed again once the lease ran out, and the dead holder can then
// neither renew nor finish it; the outcome is recorded once; a job that
// keeps losing its servers is failed after max attempts; the tenant sees
// only its own jobs.
func TestJobLifecycle(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		o.Now = func() time.Time { return now }
		db := storetest.OpenWith(t, o)
		other := storetest.OpenWith(t, o) // a second server on the same database
		ctx := storetest.Tenant(t, db, "acme")
		elsewhere := storetest.Tenant(t, db, "globex")

		if j, _, err := db.ClaimJob(ctx, "a", time.Minute, 3); j != nil || err != nil {
			t.Fatalf("nothing queued: claimed %v (%v)", j, err)
		}
		queued, err := db.CreateJob(ctx, engram.JobReflect, json.RawMessage(`{"category":"work"}`))
		if err != nil || queued.Status != engram.JobQueued {
			t.Fatalf("create: %+v (%v)", queued, err)
		}
		j, tenant, err := db.ClaimJob(ctx, "a", time.Minute, 3)
		if err != nil || j == nil || j.ID != queued.ID || tenant != engram.TenantFromContext(ctx) || j.Attempts != 1 ||
			j.Status != engram.JobRunning || string(j.Request) != `{"category":"work"}` {
			t.Fatalf("claim: %+v %q (%v)", j, tenant, err)
		}
		if j, _, _ := other.ClaimJob(ctx, "b", time.Minute, 3); j != nil {
			t.Fatal("a leased job was claimed by a second server")
		}
		if ok, err := db.RenewJob(ctx, j.ID, "a", engram.JobProgress{Done: 2, Total: 5}, time.Minute); !ok || err != nil {
			t.Fatalf("renew by the holder: %v (%v)", ok, err)
		}
		got, err := other.FindJobByID(ctx, j.ID)
		if err != nil || got.Progress != (engram.JobProgress{Done: 2, Total: 5}) || got.StartedAt == nil {
			t.Fatalf("progress seen by another server: %+v (%v)", got, err)
		}
		if _, err := db.FindJobByID(elsewhere, j.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Fatalf("another tenant's job: %v", err)
		}

		// a dies: once its lease ran out, b runs the job again from the start.
		now = now.Add(2 * time.Minute)
		j2, _, err := other.ClaimJob(ctx, "b", time.Minute, 3)
		if err != nil || j2 == nil || j2.ID != j.ID || j2.Attempts != 2 {
			t.Fatalf("take-over: %+v (%v)", j2, err)
		}
		if ok, _ := db.RenewJob(ctx, j.ID, "a", engram.JobProgress{Done: 3, Total: 5}, time.Minute); ok {
			t.Fatal("the dead holder renewed a job another server holds")
		}
		if ok, _ := db.FinishJob(ctx, j.ID, "a", engram.JobProgress{}, json.RawMessage(`{}`), ""); ok {
			t.Fatal("the dead holder finished a job another server holds")
		}
		if ok, err := other.FinishJob(ctx, j.ID, "b", engram.JobProgress{Done: 5, Total: 5}, json.RawMessage(`{"groups":5}`), ""); !ok || err != nil {
			t.Fatalf("finish: %v (%v)", ok, err)
		}
		done, _ := db.FindJobByID(ctx, j.ID)
		if done.Status != engram.JobDone || string(done.Result) != `{"groups":5}` || done.FinishedAt == nil || done.Error != "" {
			t.Fatalf("done: %+v", done)
		}
		if ok, _ := other.FinishJob(ctx, j.ID, "b", engram.JobProgress{}, nil, "again"); ok {
			t.Fatal("a finished job was finished twice")
		}

		// A job whose every server dies is failed after max attempts.
		doomed, _ := db.CreateJob(ctx, engram.JobSleep, nil)
		for range 2 {
			if j, _, _ := db.ClaimJob(ctx, "a", time.Minute, 2); j == nil || j.ID != doomed.ID {
				t.Fatalf("claim the doomed job: %+v", j)
			}
			now = now.Add(2 * time.Minute)
		}
		if j, _, err := db.ClaimJob(ctx, "a", time.Minute, 2); j != nil || err != nil {
			t.Fatalf("past max attempts: claimed %+v (%v)", j, err)
		}
		failed, _ := db.FindJobByID(ctx, doomed.ID)
		if failed.Status != engram.JobFailed || failed.Error == "" || failed.Attempts != 2 {
			t.Fatalf("past max attempts: %+v", failed)
		}

		// A cleanly stopped server puts its job back in the queue.
		released, _ := db.CreateJob(ctx, engram.JobReflect, nil)
		if j, _, _ := db.ClaimJob(ctx, "a", time.Hour, 3); j == nil || j.ID != released.ID {
			t.Fatalf("claim: %+v", j)
		}
		if err := db.ReleaseJobs(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if j, _, _ := other.ClaimJob(ctx, "b", time.Hour, 3); j == nil || j.ID != released.ID {
			t.Fatalf("a released job was not claimed at once: %+v", j)
		}

		page, err := db.FindJobs(ctx, engram.JobFilter{Limit: 2})
		if err != nil || len(page.Items) != 2 || page.Items[0].ID != released.ID || page.NextCursor == "" {
			t.Fatalf("list: %+v (%v)", page, err)
		}
		rest, err := db.FindJobs(ctx, engram.JobFilter{Limit: 2, Cursor: page.NextCursor})
		if err != nil || len(rest.Items) != 1 || rest.Items[0].ID != j.ID {
			t.Fatalf("second page: %+v (%v)", rest, err)
		}
		status := engram.JobFailed
		if _, err := db.FindJobs(ctx, engram.JobFilter{Status: &status, Cursor: page.NextCursor}); engram.ErrorCode(err) != engram.EINVALID {
			t.Fatalf("a cursor of another filter: %v", err)
		}
		bad := "finished"
		if _, err := db.FindJobs(ctx, engram.JobFilter{Status: &bad}); engram.ErrorCode(err) != engram.EINVALID {
			t.Fatalf("unknown status: %v", err)
		}
		if page, _ := db.FindJobs(elsewhere, engram.JobFilter{}); len(page.Items) != 0 {
			t.Fatalf("another tenant's list: %+v", page.Items)
		}
	})
}
