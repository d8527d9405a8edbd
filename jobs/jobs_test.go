package jobs_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/jobs"
	"github.com/engram-memory/engram/reflections"
	"github.com/engram-memory/engram/store/storetest"
)

// TestRunner: a reflect refused for its input queues nothing; a job runs
// to done with its result and progress; a job whose work fails is failed
// with the reason, once; a job a stopped server released is run by the
// next runner, which stops with its context. On both engines.
func TestRunner(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		cats := []string{"work", "life"}
		refl := reflections.New(db, reflections.Config{Categories: cats, MinGroup: 3}, nil)
		svc := jobs.New(db, refl, nil, jobs.Config{InlineMaxMemories: 0, Categories: cats, Lease: time.Second}, nil)
		for _, c := range []string{"Standup at nine", "Standup moved to ten", "Standup skipped on Fridays"} {
			if _, err := db.CreateMemory(ctx, &engram.Memory{Content: c, Category: "work", Source: json.RawMessage(`"test"`)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := svc.Reflect(ctx, engram.ReflectRequest{Category: "nope"}); engram.ErrorCode(err) != engram.EINVALID {
			t.Fatalf("unknown category: %v", err)
		}
		if page, _ := db.FindJobs(ctx, engram.JobFilter{}); len(page.Items) != 0 {
			t.Fatalf("a refused reflect queued a job: %+v", page.Items)
		}
		res, job, err := svc.Reflect(ctx, engram.ReflectRequest{})
		if err != nil || res != nil || job == nil || job.Status != engram.JobQueued {
			t.Fatalf("reflect on a tenant past the limit: %+v %+v (%v)", res, job, err)
		}
		// A job whose work fails: a request the reflector refuses.
		bad, err := db.CreateJob(ctx, engram.JobReflect, json.RawMessage(`{"category":"nope"}`))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if ran, err := svc.RunOne(context.Background()); !ran || err != nil {
				t.Fatalf("run: %v (%v)", ran, err)
			}
		}
		done, _ := db.FindJobByID(ctx, job.ID)
		var out engram.ReflectResult
		if err := json.Unmarshal(done.Result, &out); err != nil || done.Status != engram.JobDone || out.Groups != 1 ||
			len(out.Written) != 1 || done.Progress != (engram.JobProgress{Done: 1, Total: 1}) {
			t.Fatalf("done: %+v %+v (%v)", done, out, err)
		}
		failed, _ := db.FindJobByID(ctx, bad.ID)
		if failed.Status != engram.JobFailed || failed.Error != `unknown category "nope"` || failed.Result != nil || failed.Attempts != 1 {
			t.Fatalf("failed: %+v", failed)
		}
		if ran, err := svc.RunOne(context.Background()); ran || err != nil {
			t.Fatalf("nothing left, yet ran %v (%v)", ran, err)
		}

		// A server stopped holding a job released it; Run takes it.
		held, _ := db.CreateJob(ctx, engram.JobReflect, nil)
		if j, _, err := db.ClaimJob(ctx, "gone", time.Hour, 3); err != nil || j == nil || j.ID != held.ID {
			t.Fatalf("claim: %+v (%v)", j, err)
		}
		if err := db.ReleaseJobs(ctx, "gone"); err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() { svc.Run(runCtx); close(stopped) }()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if j, _ := db.FindJobByID(ctx, held.ID); j.Finished() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the runner did not run the released job")
			}
		}
		stop()
		<-stopped
	})
}
