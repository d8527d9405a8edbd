package store_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestExportImportRoundTrip: a tenant's memories, their keys and history
// come back equal in a fresh tenant, with new ids (remap) whose
// references follow; a second import into the now full tenant and a bad
// line are refused and write nothing.
func TestExportImportRoundTrip(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		src := storetest.Tenant(t, db, "src")
		a := mustCreate(t, db, src, &engram.Memory{Content: "Maya drinks oat-milk flat whites", Category: "preference", Tags: []string{"coffee"}})
		if _, err := db.UpdateMemory(src, a.ID, engram.MemoryUpdate{Content: ptr("Maya drinks oat-milk cortados")}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SetKey(src, engram.KeyWrite{Key: "/user/profile/city", Content: json.RawMessage(`"Maya lives in Lisbon"`), Source: json.RawMessage(`"chat"`)}); err != nil {
			t.Fatal(err)
		}
		gone := mustCreate(t, db, src, &engram.Memory{Content: "temporary note", Category: "work"})
		if _, err := db.DeleteMemory(src, gone.ID, nil); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.AppendSessionEvents(src, "chat-1", "", []*engram.SessionEvent{
			{Type: "message", Role: "user", Content: "where does Maya live?"},
			{Type: "message", Role: "assistant", Content: "Lisbon"}}, time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := db.SaveVector(src, a.ID, "test-model", []float32{0.25, -1, 3}); err != nil {
			t.Fatal(err)
		}
		in, err := db.CreateInteraction(src, &engram.Interaction{Prompt: "where does Maya live?", Response: "Lisbon", SessionID: "chat-1"})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := db.ExportTenant(src, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), in.ID) {
			t.Fatal("the export misses the interaction")
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		var h engram.ExportHeader
		if err := json.Unmarshal([]byte(lines[0]), &h); err != nil || h.Format != engram.ExportFormat || h.Version != 1 || h.Tenant != "src" {
			t.Fatalf("header %s: %v", lines[0], err)
		}
		dst := storetest.Tenant(t, db, "dst")
		res, err := db.ImportTenant(dst, bytes.NewReader(out.Bytes()), "")
		if err != nil {
			t.Fatal(err)
		}
		if res.Records["memory"] != 3 || res.Records["memory_event"] < 5 || res.Remapped < 4 || res.Records["session"] != 1 ||
			res.Records["session_event"] != 2 || res.Records["interaction"] != 1 || res.Records["memory_vector"] != 1 {
			t.Fatalf("import result %+v", res)
		}
		got, err := db.FindMemoryByKey(dst, "/user/profile/city")
		if err != nil || got.Content != "Maya lives in Lisbon" {
			t.Fatalf("key after import: %+v %v", got, err)
		}
		page, err := db.FindMemories(dst, engram.MemoryFilter{Query: ptr("cortados")})
		if err != nil || len(page.Items) != 1 || page.Items[0].ID == a.ID || page.Items[0].Version != 2 {
			t.Fatalf("imported memory: %+v %v", page, err)
		}
		if hits, err := db.VectorSearch(dst, "test-model", []float32{0.25, -1, 3}, "", 5); err != nil || len(hits) != 1 || hits[0].Memory.ID != page.Items[0].ID {
			t.Fatalf("vector after import: %+v %v", hits, err)
		}
		hist, err := db.FindMemoryEvents(dst, page.Items[0].ID)
		if err != nil || len(hist) != 2 || hist[0].After == nil || hist[0].After.ID != page.Items[0].ID || hist[0].After.Content != "Maya drinks oat-milk flat whites" {
			t.Fatalf("history after import: %+v %v", hist, err)
		}
		if _, evs, err := db.SessionEvents(dst, "chat-1"); err != nil || len(evs) != 2 || evs[1].Content != "Lisbon" {
			t.Fatalf("session after import: %+v %v", evs, err)
		}
		if _, err := db.ImportTenant(dst, bytes.NewReader(out.Bytes()), ""); engram.ErrorCode(err) != engram.ECONFLICT {
			t.Fatalf("import into a full tenant: %v", err)
		}
		for name, tc := range map[string]struct{ body, line string }{
			"bad json":     {lines[0] + "\n" + lines[1] + "\n{\"type\":\n", "line 3"},
			"unknown type": {lines[0] + "\n" + `{"type":"spaceship","data":{}}`, "line 2"},
			"unknown field": {lines[0] + "\n" + lines[1] + "\n" + strings.Replace(lines[2], `"data":{`, `"data":{"colour":"red",`, 1),
				"line 3"},
			"bad time":   {lines[0] + "\n" + `{"type":"memory","data":{"created_at":"yesterday"}}`, "line 2"},
			"no header":  {lines[1], "line 1"},
			"db refuses": {lines[0] + "\n" + lines[1] + "\n" + `{"type":"memory","data":{"id":"mem_x"}}`, "line 3"},
		} {
			empty := storetest.Tenant(t, db, "empty")
			_, err := db.ImportTenant(empty, strings.NewReader(tc.body), "")
			if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(err.Error(), tc.line) {
				t.Fatalf("%s: %v, want EINVALID naming %s", name, err, tc.line)
			}
			if p, _ := db.FindMemories(empty, engram.MemoryFilter{IncludeArchived: true, IncludeInvalid: true}); len(p.Items) != 0 {
				t.Fatalf("%s: a refused import wrote %d memories", name, len(p.Items))
			}
		}
	})
}

// TestPruneAndReset: prune archives or deletes what its filter selects
// (dry runs change nothing); reset empties the tenant, keeps its keys,
// and the tenant can then take an import.
func TestPruneAndReset(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		if _, _, err := db.CreateAPIKey(ctx, "acme", "app"); err != nil {
			t.Fatal(err)
		}
		mustCreate(t, db, ctx, &engram.Memory{Content: "standup at nine", Category: "work"})
		mustCreate(t, db, ctx, &engram.Memory{Content: "likes jazz", Category: "preference"})
		if _, err := db.PruneMemories(ctx, engram.PruneFilter{Action: engram.PruneArchive}); engram.ErrorCode(err) != engram.EINVALID {
			t.Fatalf("prune without a filter: %v", err)
		}
		if _, err := db.PruneMemories(ctx, engram.PruneFilter{Action: "shred", Category: ptr("work")}); engram.ErrorCode(err) != engram.EINVALID {
			t.Fatalf("bad action: %v", err)
		}
		res, err := db.PruneMemories(ctx, engram.PruneFilter{Action: engram.PruneArchive, Category: ptr("work"), DryRun: true})
		if err != nil || res.Matched != 1 || res.Archived != 0 {
			t.Fatalf("dry run: %+v %v", res, err)
		}
		res, err = db.PruneMemories(ctx, engram.PruneFilter{Action: engram.PruneArchive, Category: ptr("work")})
		if err != nil || res.Archived != 1 {
			t.Fatalf("archive: %+v %v", res, err)
		}
		if p, _ := db.FindMemories(ctx, engram.MemoryFilter{}); len(p.Items) != 1 || p.Items[0].Category != "preference" {
			t.Fatalf("after archive: %+v", p.Items)
		}
		res, err = db.PruneMemories(ctx, engram.PruneFilter{Action: engram.PruneDelete, Before: ptr(time.Now().Add(time.Hour))})
		if err != nil || res.Deleted != 2 {
			t.Fatalf("delete by age: %+v %v", res, err)
		}
		var out bytes.Buffer
		if err := db.ExportTenant(ctx, &out); err != nil {
			t.Fatal(err)
		}
		reset, err := db.ResetTenant(ctx)
		if err != nil || reset.Removed["memories"] != 2 || reset.Removed["memory_events"] == 0 {
			t.Fatalf("reset: %+v %v", reset, err)
		}
		if p, _ := db.FindMemories(ctx, engram.MemoryFilter{IncludeArchived: true, IncludeInvalid: true}); len(p.Items) != 0 {
			t.Fatalf("after reset: %d memories", len(p.Items))
		}
		if keys, _ := db.FindAPIKeys(ctx, "acme"); len(keys) == 0 {
			t.Fatal("reset removed the tenant's keys")
		}
		if _, err := db.ImportTenant(ctx, &out, engram.ImportKeep); err != nil {
			t.Fatalf("import into the reset tenant with its own ids: %v", err)
		}
		if p, _ := db.FindMemories(ctx, engram.MemoryFilter{IncludeArchived: true, IncludeInvalid: true}); len(p.Items) != 2 {
			t.Fatalf("after re-import: %d memories", len(p.Items))
		}
	})
}

// TestPruneBelowRetention: a prune by retention takes the memories that
// decayed below it, never a P0 one.
func TestPruneBelowRetention(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		o.Now = func() time.Time { return now }
		db := storetest.OpenWith(t, o)
		ctx := storetest.Tenant(t, db, "acme")
		faded := mustCreate(t, db, ctx, &engram.Memory{Content: "a passing remark", Category: "life", Priority: engram.P3})
		mustCreate(t, db, ctx, &engram.Memory{Content: "the user's name is Maya", Category: "life", Priority: engram.P0})
		now = now.Add(60 * 24 * time.Hour)
		fresh := mustCreate(t, db, ctx, &engram.Memory{Content: "a new remark", Category: "life", Priority: engram.P3})
		res, err := db.PruneMemories(ctx, engram.PruneFilter{Action: engram.PruneArchive, BelowRetention: ptr(0.5)})
		if err != nil || res.Matched != 1 || res.IDs[0] != faded.ID {
			t.Fatalf("prune below retention: %+v %v (fresh %s)", res, err, fresh.ID)
		}
		if _, err := db.PruneMemories(ctx, engram.PruneFilter{Action: engram.PruneArchive, BelowRetention: ptr(1.5)}); engram.ErrorCode(err) != engram.EINVALID {
			t.Fatalf("below_retention 1.5: %v", err)
		}
	})
}
