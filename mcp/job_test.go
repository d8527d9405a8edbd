package mcp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/jobs"
	"github.com/engram-memory/engram/mcp"
	"github.com/engram-memory/engram/reflections"
	"github.com/engram-memory/engram/store/storetest"
)

// TestReflectJob: on a tenant past jobs.inline_max_memories the reflect
// tool answers the job it queued (id, status, where to follow it) and the
// reflections as they stand; the job, once run, writes the reflections.
func TestReflectJob(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		cfg := configs.Default()
		refl := reflections.New(db, reflections.Config{Categories: cfg.Memory.Categories, MinGroup: 3}, nil)
		js := jobs.New(db, refl, nil, jobs.Config{InlineMaxMemories: 2, Categories: cfg.Memory.Categories}, nil)
		tools := mcp.New(mcp.Config{Memories: db, Aliases: db, Reflections: refl, Jobs: js, Auth: db, Health: db, Categories: cfg.Memory.Categories,
			Limits: mcp.Limits{MaxArgumentBytes: cfg.Limits.MaxBodyBytes, MaxJSONDepth: cfg.Limits.MaxJSONDepth, MaxBatch: cfg.Limits.MaxBatch,
				Keys: cfg.Limits.KeyLimits()}, Version: "test"})
		mux := http.NewServeMux()
		mux.Handle("/mcp", tools.Handler())
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		secret := key(t, db, "acme")
		tenant, _ := db.FindTenant(context.Background(), "acme")
		ctx := engram.NewContextWithTenant(context.Background(), tenant.ID)
		for i := range 3 {
			if _, err := db.CreateMemory(ctx, &engram.Memory{Content: fmt.Sprintf("Deploys run on Friday %d", i), Category: "work",
				Subcategory: "deploys", Source: []byte(`"test"`)}); err != nil {
				t.Fatal(err)
			}
		}
		c := connect(t, secret, srv.URL)
		out := c.Call(t, "reflect", map[string]any{})
		job, _ := out["job"].(map[string]any)
		if job == nil || job["status"] != engram.JobQueued || job["status_url"] != "/v1/jobs/"+job["id"].(string) ||
			len(out["written"].([]any)) != 0 || len(out["reflections"].([]any)) != 0 {
			t.Fatalf("reflect on a large tenant: %v", out)
		}
		if ran, err := js.RunOne(context.Background()); !ran || err != nil {
			t.Fatalf("run the job: %v (%v)", ran, err)
		}
		done, err := db.FindJobByID(ctx, job["id"].(string))
		if err != nil || done.Status != engram.JobDone {
			t.Fatalf("job: %+v (%v)", done, err)
		}
		// Still large: a job again, with the reflection the first one wrote.
		if out := c.Call(t, "reflect", map[string]any{}); out["job"] == nil || len(out["reflections"].([]any)) != 1 {
			t.Fatalf("after the job: %v", out)
		}
	})
}
