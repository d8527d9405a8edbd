package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// TestSessionEventsPage: a session's events come in pages of limit,
// oldest first, each page's next cursor leading to the next and the last
// page having none; Newest gives the last events; a cursor is bound to
// its session; a bad limit is refused.
func TestSessionEventsPage(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		evs := make([]*engram.SessionEvent, 25)
		for i := range evs {
			evs[i] = &engram.SessionEvent{Type: engram.EventDecision, Content: fmt.Sprint("d", i+1)}
		}
		for _, id := range []string{"s", "t"} {
			if _, _, err := db.AppendSessionEvents(ctx, id, "", evs, time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		var seqs []int64
		cursor, pages := "", 0
		for {
			list, err := db.SessionEventsPage(ctx, "s", engram.EventPage{Limit: 10, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if list.Session.Events != 25 || len(list.Events) > 10 {
				t.Fatalf("page %d: session %+v, %d events", pages, list.Session, len(list.Events))
			}
			for _, e := range list.Events {
				seqs = append(seqs, e.Seq)
			}
			if list.NextCursor == "" {
				break
			}
			cursor = list.NextCursor
		}
		if pages != 3 || len(seqs) != 25 || seqs[0] != 1 || seqs[24] != 25 {
			t.Fatalf("%d pages, seqs %v", pages, seqs)
		}
		list, err := db.SessionEventsPage(ctx, "s", engram.EventPage{})
		if err != nil || len(list.Events) != 25 || list.NextCursor != "" {
			t.Fatalf("default page: %d events, cursor %q, %v", len(list.Events), list.NextCursor, err)
		}
		list, err = db.SessionEventsPage(ctx, "s", engram.EventPage{Limit: 4, Newest: true})
		if err != nil || len(list.Events) != 4 || list.Events[0].Seq != 22 || list.Events[3].Content != "d25" || list.NextCursor != "" {
			t.Fatalf("newest 4: %+v %v", list, err)
		}
		first, _ := db.SessionEventsPage(ctx, "s", engram.EventPage{Limit: 10})
		if _, err := db.SessionEventsPage(ctx, "t", engram.EventPage{Cursor: first.NextCursor}); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("another session's cursor: %v", err)
		}
		for _, limit := range []int{-1, storetest.Rules().Limits.MaxListLimit + 1} {
			if _, err := db.SessionEventsPage(ctx, "s", engram.EventPage{Limit: limit}); engram.ErrorCode(err) != engram.EINVALID {
				t.Errorf("limit %d: %v", limit, err)
			}
		}
		if _, err := db.SessionEventsPage(ctx, "nope", engram.EventPage{}); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("unknown session: %v", err)
		}
	})
}

// TestSessionMaxEvents: a post that would take a session past
// MaxSessionEvents is refused with ETOOLARGE and writes nothing, and
// posts racing from two stores on one database never overshoot it.
func TestSessionMaxEvents(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		o.MaxSessionEvents = 10
		dbs := []*store.DB{storetest.OpenWith(t, o), storetest.OpenWith(t, o)}
		ctx := storetest.Tenant(t, dbs[0], "acme")
		ev := func(n int) []*engram.SessionEvent {
			out := make([]*engram.SessionEvent, n)
			for i := range out {
				out[i] = &engram.SessionEvent{Type: engram.EventDecision, Content: "d"}
			}
			return out
		}
		if _, _, err := dbs[0].AppendSessionEvents(ctx, "big", "", ev(11), time.Hour); engram.ErrorCode(err) != engram.ETOOLARGE {
			t.Fatalf("11 events into a new session: %v", err)
		}
		if _, err := dbs[0].FindSession(ctx, "big"); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("a refused first post created its session: %v", err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		stored, refused := 0, 0
		for i := range 16 {
			wg.Go(func() {
				_, _, err := dbs[i%2].AppendSessionEvents(ctx, "s", "", ev(1), time.Hour)
				mu.Lock()
				defer mu.Unlock()
				switch engram.ErrorCode(err) {
				case "":
					stored++
				case engram.ETOOLARGE:
					refused++
					if !strings.Contains(engram.ErrorMessage(err), "sessions.max_events") {
						t.Errorf("refusal does not name the key: %v", err)
					}
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		sess, events, err := dbs[1].SessionEvents(ctx, "s")
		if err != nil || stored != 10 || refused != 6 || sess.Events != 10 || len(events) != 10 {
			t.Fatalf("stored %d refused %d; session holds %d (%d read): %v", stored, refused, sess.Events, len(events), err)
		}
	})
}

// TestQuotas: writes past a tenant's memories, bytes or sessions quota
// are refused with EQUOTA naming the quota and writing nothing, whether
// they create, replace or revive a memory, or create a session; a write
// that adds nothing passes; other tenants are unaffected; deleting makes
// room; racing writers on two stores never overshoot.
func TestQuotas(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		o.Quotas = store.Quotas{Memories: 3, Bytes: 100, Sessions: 2}
		dbs := []*store.DB{storetest.OpenWith(t, o), storetest.OpenWith(t, o)}
		db := dbs[0]
		ctx := storetest.Tenant(t, db, "acme")
		other := storetest.Tenant(t, db, "other")
		mem := func(content string) *engram.Memory { return &engram.Memory{Content: content, Category: "work"} }
		refused := func(err error, quota string) bool {
			return engram.ErrorCode(err) == engram.EQUOTA && strings.Contains(engram.ErrorMessage(err), "quotas.max_"+quota)
		}
		count := func(ctx context.Context) int {
			page, err := db.FindMemories(ctx, engram.MemoryFilter{IncludeInvalid: true})
			if err != nil {
				t.Fatal(err)
			}
			return len(page.Items)
		}

		// Memories: a batch that would pass the quota is refused whole.
		if _, err := db.CreateMemories(ctx, []*engram.Memory{mem("a"), mem("b"), mem("c"), mem("d")}); !refused(err, "memories") {
			t.Fatalf("4 memories over a quota of 3: %v", err)
		}
		if n := count(ctx); n != 0 {
			t.Fatalf("a refused batch wrote %d memories", n)
		}
		var ids []string
		for _, c := range []string{"one", "two", "three"} {
			res, err := db.CreateMemory(ctx, mem(c))
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, res.Memory.ID)
		}
		if _, err := db.CreateMemory(ctx, mem("four")); !refused(err, "memories") {
			t.Fatalf("a 4th memory: %v", err)
		}
		if _, err := db.SetKey(ctx, engram.KeyWrite{Key: "/work/k", Content: []byte(`"v"`), Source: []byte(`"test"`)}); !refused(err, "memories") {
			t.Fatalf("a new key past the quota: %v", err)
		}
		if res, err := db.CreateMemory(ctx, mem("one")); err != nil || !res.Deduplicated {
			t.Errorf("a duplicate adds nothing and passes: %+v %v", res, err)
		}
		if _, err := db.CreateMemory(other, mem("four")); err != nil {
			t.Errorf("another tenant is refused: %v", err)
		}
		if _, err := db.DeleteMemory(ctx, ids[0], nil); err != nil {
			t.Fatal(err)
		}
		res, err := db.CreateMemory(ctx, mem("four"))
		if err != nil {
			t.Fatalf("after a delete: %v", err)
		}
		if _, err := db.RollbackMemory(ctx, ids[0], 1, nil); !refused(err, "memories") {
			t.Errorf("reviving past the quota: %v", err)
		}
		if m, _ := db.FindMemoryByID(ctx, ids[0]); m.Valid {
			t.Errorf("a refused rollback revived the memory")
		}

		// Bytes: growing content past the quota is refused, shrinking is not.
		long := strings.Repeat("x", 95)
		if _, err := db.UpdateMemory(ctx, res.Memory.ID, engram.MemoryUpdate{Content: &long}); !refused(err, "bytes") {
			t.Fatalf("content past the bytes quota: %v", err)
		}
		short := "4"
		if _, err := db.UpdateMemory(ctx, res.Memory.ID, engram.MemoryUpdate{Content: &short}); err != nil {
			t.Errorf("shrinking: %v", err)
		}
		if m, _ := db.FindMemoryByID(ctx, res.Memory.ID); m.Content != "4" || m.Version != 2 {
			t.Errorf("memory after a refused and an allowed update: %+v", m)
		}

		// Sessions: the 3rd is refused whether events or state create it.
		msg := []*engram.SessionEvent{{Type: engram.EventDecision, Content: "d"}}
		for _, id := range []string{"s1", "s2"} {
			if _, _, err := db.AppendSessionEvents(ctx, id, "", msg, time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := db.AppendSessionEvents(ctx, "s3", "", msg, time.Hour); !refused(err, "sessions") {
			t.Errorf("a 3rd session: %v", err)
		}
		if _, err := db.UpdateWorkingState(ctx, "s3", engram.ScopeSession, "s3", time.Hour, func(*engram.WorkingState) (*engram.WorkingState, error) {
			return &engram.WorkingState{State: []byte(`{}`)}, nil
		}); !refused(err, "sessions") {
			t.Errorf("a 3rd session by its state: %v", err)
		}
		if _, err := db.FindSession(ctx, "s3"); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("a refused session exists: %v", err)
		}
		if _, _, err := db.AppendSessionEvents(ctx, "s1", "", msg, time.Hour); err != nil {
			t.Errorf("an existing session takes events: %v", err)
		}
		got := db.QuotaRefusals()
		if got[store.QuotaMemories] != 4 || got[store.QuotaBytes] != 1 || got[store.QuotaSessions] != 2 {
			t.Errorf("refusals counted: %v", got)
		}

		// Racing writers on two stores stop at the quota exactly.
		race := storetest.Tenant(t, db, "race")
		var wg sync.WaitGroup
		for i := range 12 {
			wg.Go(func() {
				_, err := dbs[i%2].CreateMemory(race, mem(fmt.Sprint("race ", i)))
				if err != nil && engram.ErrorCode(err) != engram.EQUOTA {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if n := count(race); n != 3 {
			t.Errorf("racing writers stored %d memories under a quota of 3", n)
		}
	})
}
