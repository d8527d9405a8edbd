package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

func ptr[T any](v T) *T { return &v }

func mustCreate(t *testing.T, db *store.DB, ctx context.Context, m *engram.Memory) *engram.Memory {
	t.Helper()
	res, err := db.CreateMemory(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	return res.Memory
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if engram.ErrorCode(err) != code {
		t.Fatalf("error = %v, want code %s", err, code)
	}
}

func TestCreateGet(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		m := mustCreate(t, db, ctx, &engram.Memory{
			Content: "User prefers dark roast coffee", Category: "preference", Tags: []string{"coffee", " coffee ", "drinks"},
			Data: json.RawMessage(`{"b":1,"a":[true,null]}`), Priority: engram.P1,
		})
		if !strings.HasPrefix(m.ID, "mem_") || m.Version != 1 || !m.Valid || m.TokenCount == 0 || m.ContentHash == "" {
			t.Fatalf("created %+v", m)
		}
		if fmt.Sprint(m.Tags) != "[coffee drinks]" {
			t.Fatalf("tags not normalised: %q", m.Tags)
		}
		if m.Stability != 365 || m.Confidence != 0.5 || m.SecurityLevel != engram.SecurityInternal {
			t.Fatalf("defaults: %+v", m)
		}
		got, err := db.FindMemoryByID(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Data) != `{"b":1,"a":[true,null]}` {
			t.Fatalf("data must round-trip byte for byte, got %s", got.Data)
		}
		if got.Content != m.Content || !got.CreatedAt.Equal(m.CreatedAt) {
			t.Fatalf("got %+v want %+v", got, m)
		}
		_, err = db.FindMemoryByID(ctx, "mem_nope")
		wantCode(t, err, engram.ENOTFOUND)
	})
}

func TestCreateInvalidChangesNothing(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		long := strings.Repeat("x", storetest.Rules().Limits.MaxContentChars+1)
		manyTags := make([]string, 33)
		for i := range manyTags {
			manyTags[i] = fmt.Sprint("t", i)
		}
		for _, tc := range []struct {
			name string
			m    engram.Memory
			code string
		}{
			{"empty content", engram.Memory{Content: "  "}, engram.EINVALID},
			{"long content", engram.Memory{Content: long}, engram.ETOOLARGE},
			{"unknown category", engram.Memory{Content: "x", Category: "nope"}, engram.EINVALID},
			{"bad priority", engram.Memory{Content: "x", Priority: "P9"}, engram.EINVALID},
			{"confidence > 1", engram.Memory{Content: "x", Confidence: 1.5}, engram.EINVALID},
			{"negative importance", engram.Memory{Content: "x", Importance: -1}, engram.EINVALID},
			{"too many tags", engram.Memory{Content: "x", Tags: manyTags}, engram.EINVALID},
			{"empty tag", engram.Memory{Content: "x", Tags: []string{""}}, engram.EINVALID},
			{"control in tag", engram.Memory{Content: "x", Tags: []string{"a\nb"}}, engram.EINVALID},
			{"bad key", engram.Memory{Content: "x", Key: "/a/../b"}, engram.EINVALID},
			{"bad security", engram.Memory{Content: "x", SecurityLevel: "top"}, engram.EINVALID},
		} {
			_, err := db.CreateMemory(ctx, &tc.m)
			if engram.ErrorCode(err) != tc.code {
				t.Errorf("%s: err %v, want %s", tc.name, err, tc.code)
			}
		}
		page, err := db.FindMemories(ctx, engram.MemoryFilter{IncludeInvalid: true, IncludeArchived: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 0 {
			t.Fatalf("invalid writes stored %d memories", len(page.Items))
		}
	})
}

func TestWriteGuard(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		first := mustCreate(t, db, ctx, &engram.Memory{Content: "Standup is at 9:30", Category: "work"})
		res, err := db.CreateMemory(ctx, &engram.Memory{Content: "  Standup is   at 9:30\n", Category: "work"})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Deduplicated || res.Memory.ID != first.ID {
			t.Fatalf("identical content must return the existing memory: %+v", res)
		}
		other := mustCreate(t, db, ctx, &engram.Memory{Content: "Standup is at 9:30", Category: "life"})
		if other.ID == first.ID {
			t.Fatal("another category is another memory")
		}
		private := mustCreate(t, db, ctx, &engram.Memory{Content: "my private note", Category: "work", AgentID: "a1"})
		theirs, err := db.CreateMemory(ctx, &engram.Memory{Content: "my private note", Category: "work", AgentID: "a2"})
		if err != nil || theirs.Deduplicated || theirs.Memory.ID == private.ID || theirs.Memory.AgentID != "a2" {
			t.Fatalf("another agent's private memory must never be returned: %+v %v", theirs, err)
		}
		archived := mustCreate(t, db, ctx, &engram.Memory{Content: "old plan", Category: "work"})
		if _, err := db.UpdateMemory(ctx, archived.ID, engram.MemoryUpdate{Archived: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		if res, err := db.CreateMemory(ctx, &engram.Memory{Content: "old plan", Category: "work"}); err != nil || res.Deduplicated {
			t.Fatalf("an archived copy must not swallow a new write: %+v %v", res, err)
		}
		ctxB := storetest.Tenant(t, db, "beta")
		inB := mustCreate(t, db, ctxB, &engram.Memory{Content: "Standup is at 9:30", Category: "work"})
		if inB.ID == first.ID {
			t.Fatal("another tenant is another memory")
		}
		if _, err := db.DeleteMemory(ctx, first.ID, nil); err != nil {
			t.Fatal(err)
		}
		again, err := db.CreateMemory(ctx, &engram.Memory{Content: "Standup is at 9:30", Category: "work"})
		if err != nil || again.Deduplicated {
			t.Fatalf("after deleting, the content may be stored again: %+v %v", again, err)
		}
		// Concurrent identical creates store one memory.
		var wg sync.WaitGroup
		ids := make([]string, 8)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := db.CreateMemory(ctx, &engram.Memory{Content: "race me", Category: "work"})
				if err != nil {
					t.Error(err)
					return
				}
				ids[i] = res.Memory.ID
			}()
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("concurrent identical creates gave %v", ids)
			}
		}
	})
}

func TestUpdateVersions(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		m := mustCreate(t, db, ctx, &engram.Memory{Content: "v1", Category: "work"})
		u, err := db.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Content: ptr("v2 longer content"), ExpectVersion: ptr(int64(1)), Priority: ptr(engram.P0)})
		if err != nil {
			t.Fatal(err)
		}
		if u.Version != 2 || u.Content != "v2 longer content" || u.TokenCount <= m.TokenCount || u.Stability != 0 {
			t.Fatalf("updated %+v", u)
		}
		_, err = db.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Content: ptr("stale"), ExpectVersion: ptr(int64(1))})
		wantCode(t, err, engram.ECONFLICT)
		_, err = db.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Category: ptr("nope")})
		wantCode(t, err, engram.EINVALID)
		_, err = db.UpdateMemory(ctx, "mem_missing", engram.MemoryUpdate{Content: ptr("x")})
		wantCode(t, err, engram.ENOTFOUND)
		got, _ := db.FindMemoryByID(ctx, m.ID)
		if got.Version != 2 || got.Content != "v2 longer content" {
			t.Fatalf("failed updates changed the memory: %+v", got)
		}
	})
}

// Two concurrent updates never lose one silently: unpinned updates are
// all applied; pinned ones to the same version let exactly one win.
func TestConcurrentUpdates(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		m := mustCreate(t, db, ctx, &engram.Memory{Content: "counter", Category: "work"})
		const n = 8
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := db.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Summary: ptr(fmt.Sprint("s", i))}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		got, _ := db.FindMemoryByID(ctx, m.ID)
		if got.Version != 1+n {
			t.Fatalf("version %d after %d updates", got.Version, n)
		}
		events, _ := db.FindMemoryEvents(ctx, m.ID)
		if len(events) != 1+n {
			t.Fatalf("%d events", len(events))
		}
		var ok, conflict int
		var mu sync.Mutex
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := db.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Summary: ptr(fmt.Sprint("p", i)), ExpectVersion: ptr(got.Version)})
				mu.Lock()
				defer mu.Unlock()
				switch engram.ErrorCode(err) {
				case "":
					ok++
				case engram.ECONFLICT:
					conflict++
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if ok != 1 || conflict != n-1 {
			t.Fatalf("pinned updates: %d ok, %d conflicts", ok, conflict)
		}
	})
}

func TestDeleteHistoryRollback(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		m := mustCreate(t, db, ctx, &engram.Memory{Content: "first", Category: "work", Tags: []string{"a"}})
		if _, err := db.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Content: ptr("second"), Tags: ptr([]string{"b"})}); err != nil {
			t.Fatal(err)
		}
		d, err := db.DeleteMemory(ctx, m.ID, nil)
		if err != nil || d.Valid || d.Version != 3 {
			t.Fatalf("delete: %+v %v", d, err)
		}
		again, err := db.DeleteMemory(ctx, m.ID, nil)
		if err != nil || again.Version != 3 {
			t.Fatalf("second delete must change nothing: %+v %v", again, err)
		}
		_, err = db.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Content: ptr("x")})
		wantCode(t, err, engram.ECONFLICT)
		events, err := db.FindMemoryEvents(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, e := range events {
			actions = append(actions, e.Action)
		}
		if fmt.Sprint(actions) != "[create update tombstone]" || events[1].Before.Content != "first" || events[1].After.Content != "second" {
			t.Fatalf("history %v", actions)
		}
		r, err := db.RollbackMemory(ctx, m.ID, 1, ptr(int64(3)))
		if err != nil {
			t.Fatal(err)
		}
		if !r.Valid || r.Content != "first" || fmt.Sprint(r.Tags) != "[a]" || r.Version != 4 || r.ID != m.ID {
			t.Fatalf("rollback %+v", r)
		}
		_, err = db.RollbackMemory(ctx, m.ID, 4, nil)
		wantCode(t, err, engram.EINVALID)
		_, err = db.RollbackMemory(ctx, m.ID, 0, nil)
		wantCode(t, err, engram.EINVALID)
		_, err = db.RollbackMemory(ctx, m.ID, 2, ptr(int64(1)))
		wantCode(t, err, engram.ECONFLICT)
		_, err = db.FindMemoryEvents(ctx, "mem_missing")
		wantCode(t, err, engram.ENOTFOUND)
	})
}

func TestListFiltersAndPaging(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		for i := range 7 {
			mustCreate(t, db, ctx, &engram.Memory{Content: fmt.Sprint("work note ", i), Category: "work", Tags: []string{"n"}})
		}
		mustCreate(t, db, ctx, &engram.Memory{Content: "我喜欢喝咖啡，不加糖", Category: "preference", Tags: []string{"饮品"}})
		mustCreate(t, db, ctx, &engram.Memory{Content: "下周三上午十点牙科复诊", Category: "life", AgentID: "planner"})
		mustCreate(t, db, ctx, &engram.Memory{Content: "She was painting sunrises all summer", Category: "life"})
		mustCreate(t, db, ctx, &engram.Memory{Content: "deploy with make release", Category: "strategy", Key: "/agent/strategy/deploy", Source: json.RawMessage(`"test"`)})

		var all []string
		f := engram.MemoryFilter{Category: ptr("work"), Limit: 3}
		for pages := 0; ; pages++ {
			page, err := db.FindMemories(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range page.Items {
				all = append(all, m.Content)
			}
			if page.NextCursor == "" {
				break
			}
			f.Cursor = page.NextCursor
		}
		if len(all) != 7 || all[0] != "work note 6" || all[6] != "work note 0" {
			t.Fatalf("paged %q", all)
		}
		count := func(f engram.MemoryFilter) int {
			t.Helper()
			page, err := db.FindMemories(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			return len(page.Items)
		}
		for name, tc := range map[string]struct {
			f    engram.MemoryFilter
			want int
		}{
			"tag":             {engram.MemoryFilter{Tag: ptr("n")}, 7},
			"chinese tag":     {engram.MemoryFilter{Tag: ptr("饮品")}, 1},
			"q 咖啡":            {engram.MemoryFilter{Query: ptr("咖啡")}, 1},
			"q 牙科":            {engram.MemoryFilter{Query: ptr("牙科")}, 1},
			"q stemmed":       {engram.MemoryFilter{Query: ptr("paints sunrise")}, 1},
			"q all terms":     {engram.MemoryFilter{Query: ptr("paint coffee")}, 0},
			"q syntax":        {engram.MemoryFilter{Query: ptr(`"work" AND note* -x NEAR(a) OR '; DROP TABLE memories; --`)}, 0},
			"q quotes":        {engram.MemoryFilter{Query: ptr(`"work" note`)}, 7},
			"q emoji":         {engram.MemoryFilter{Query: ptr("🙂🙂")}, 0},
			"q key":           {engram.MemoryFilter{Query: ptr("deploy")}, 1},
			"agent":           {engram.MemoryFilter{AgentID: ptr("planner")}, 1},
			"key prefix":      {engram.MemoryFilter{KeyPrefix: ptr("/agent/")}, 1},
			"key prefix none": {engram.MemoryFilter{KeyPrefix: ptr("/agent%")}, 0},
			"needs_revision":  {engram.MemoryFilter{NeedsRevision: ptr(true)}, 0},
			"everything":      {engram.MemoryFilter{}, 11},
		} {
			if got := count(tc.f); got != tc.want {
				t.Errorf("%s: %d memories, want %d", name, got, tc.want)
			}
		}
		for name, f := range map[string]engram.MemoryFilter{
			"negative limit":      {Limit: -1},
			"huge limit":          {Limit: 1 << 30},
			"forged cursor":       {Cursor: "eyJhIjo1fQ.AAAAAAAAAAAAAAAAAAAAAA"},
			"garbage cursor":      {Cursor: "%%%"},
			"cursor other filter": {Cursor: firstCursor(t, db, ctx), Category: ptr("life")},
		} {
			_, err := db.FindMemories(ctx, f)
			if engram.ErrorCode(err) != engram.EINVALID {
				t.Errorf("%s: err %v, want invalid", name, err)
			}
		}
	})
}

func firstCursor(t *testing.T, db *store.DB, ctx context.Context) string {
	page, err := db.FindMemories(ctx, engram.MemoryFilter{Limit: 1})
	if err != nil || page.NextCursor == "" {
		t.Fatalf("no cursor: %v", err)
	}
	return page.NextCursor
}

// A tenant never sees, changes or infers another tenant's memories.
func TestTenantIsolation(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		a := storetest.Tenant(t, db, "alpha")
		b := storetest.Tenant(t, db, "beta")
		m := mustCreate(t, db, a, &engram.Memory{Content: "alpha secret", Category: "work", Key: "/alpha/secret", Source: json.RawMessage(`"test"`)})
		_, err := db.FindMemoryByID(b, m.ID)
		wantCode(t, err, engram.ENOTFOUND)
		_, err = db.UpdateMemory(b, m.ID, engram.MemoryUpdate{Content: ptr("pwned")})
		wantCode(t, err, engram.ENOTFOUND)
		_, err = db.DeleteMemory(b, m.ID, nil)
		wantCode(t, err, engram.ENOTFOUND)
		_, err = db.FindMemoryEvents(b, m.ID)
		wantCode(t, err, engram.ENOTFOUND)
		_, err = db.RollbackMemory(b, m.ID, 1, nil)
		wantCode(t, err, engram.ENOTFOUND)
		_, err = db.FindMemoryByKey(b, "/alpha/secret")
		wantCode(t, err, engram.ENOTFOUND)
		page, err := db.FindMemories(b, engram.MemoryFilter{Query: ptr("alpha secret"), IncludeInvalid: true, IncludeArchived: true})
		if err != nil || len(page.Items) != 0 {
			t.Fatalf("beta listed %d of alpha's memories (%v)", len(page.Items), err)
		}
		// B writing the same key gets its own memory; A's is untouched.
		bm, err := db.SetKey(b, engram.KeyWrite{Key: "/alpha/secret", Content: json.RawMessage(`"beta's"`), Source: json.RawMessage(`"test"`)})
		if err != nil || bm.ID == m.ID {
			t.Fatalf("beta key write: %+v %v", bm, err)
		}
		// A cursor of tenant A is refused for tenant B.
		mustCreate(t, db, a, &engram.Memory{Content: "alpha two", Category: "work"})
		_, err = db.FindMemories(b, engram.MemoryFilter{Limit: 1, Cursor: firstCursor(t, db, a)})
		wantCode(t, err, engram.EINVALID)
		got, _ := db.FindMemoryByID(a, m.ID)
		if got.Content != "alpha secret" || got.Version != 1 {
			t.Fatalf("alpha's memory changed: %+v", got)
		}
		_, err = db.FindMemoryByID(context.Background(), m.ID)
		wantCode(t, err, engram.EUNAUTHORIZED)
	})
}

func TestExpiryHonoured(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
		o := storetest.Options(t, engine)
		o.Now = func() time.Time { return now }
		db := storetest.OpenWith(t, o)
		ctx := storetest.Tenant(t, db, "acme")
		soon := now.Add(time.Hour)
		mustCreate(t, db, ctx, &engram.Memory{Content: "temporary", Category: "work", ExpiresAt: &soon})
		if n := len(mustList(t, db, ctx, engram.MemoryFilter{})); n != 1 {
			t.Fatalf("before expiry: %d", n)
		}
		now = now.Add(2 * time.Hour)
		if n := len(mustList(t, db, ctx, engram.MemoryFilter{})); n != 0 {
			t.Fatalf("after expiry: %d", n)
		}
		if n := len(mustList(t, db, ctx, engram.MemoryFilter{IncludeInvalid: true})); n != 1 {
			t.Fatalf("include_invalid: %d", n)
		}
		again, err := db.CreateMemory(ctx, &engram.Memory{Content: "temporary", Category: "work"})
		if err != nil || again.Deduplicated {
			t.Fatalf("an expired copy must not swallow a new write: %+v %v", again, err)
		}
		if n := len(mustList(t, db, ctx, engram.MemoryFilter{})); n != 1 {
			t.Fatalf("after rewriting expired content: %d live", n)
		}
	})
}

func mustList(t *testing.T, db *store.DB, ctx context.Context, f engram.MemoryFilter) []*engram.Memory {
	t.Helper()
	page, err := db.FindMemories(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}

func TestCreateBatchAtomic(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		_, err := db.CreateMemories(ctx, []*engram.Memory{
			{Content: "one", Category: "work"}, {Content: "two", Category: "nope"},
		})
		if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(engram.ErrorMessage(err), "memories[1]") {
			t.Fatalf("err %v", err)
		}
		_, err = db.CreateMemories(ctx, []*engram.Memory{
			{Content: "one", Category: "work", Key: "/k", Source: json.RawMessage(`"t"`)}, {Content: "two", Category: "work", Key: "/k", Source: json.RawMessage(`"t"`)},
		})
		wantCode(t, err, engram.ECONFLICT)
		if n := len(mustList(t, db, ctx, engram.MemoryFilter{IncludeInvalid: true})); n != 0 {
			t.Fatalf("a refused batch stored %d memories", n)
		}
		res, err := db.CreateMemories(ctx, []*engram.Memory{
			{Content: "same", Category: "work"}, {Content: "other", Category: "work"}, {Content: " same ", Category: "work"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res[2].Memory.ID != res[0].Memory.ID || !res[2].Deduplicated || res[0].Deduplicated || res[1].Memory.ID == res[0].Memory.ID {
			t.Fatalf("batch results %+v %+v %+v", res[0], res[1], res[2])
		}
	})
}
