package store_test

import (
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

// TestSessionEventsConcurrent: posts to one new session from several
// connections at once (two stores on one database) all land, numbered
// 1..n without gaps or repeats, each post's events contiguous, and each
// post's previous message is one that was stored before it.
func TestSessionEventsConcurrent(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		dbs := []*store.DB{storetest.OpenWith(t, o), storetest.OpenWith(t, o)}
		ctx := storetest.Tenant(t, dbs[0], "acme")
		const posts, per = 8, 3
		var wg sync.WaitGroup
		errs := make(chan error, posts)
		for p := range posts {
			wg.Go(func() {
				evs := make([]*engram.SessionEvent, per)
				for i := range evs {
					evs[i] = &engram.SessionEvent{Type: engram.EventMessage, Role: "user", Content: fmt.Sprintf("post %d event %d", p, i)}
				}
				_, _, err := dbs[p%2].AppendSessionEvents(ctx, "s", "", evs, time.Hour)
				if err == nil && (evs[per-1].Seq-evs[0].Seq != per-1) {
					err = fmt.Errorf("post %d numbered %d..%d", p, evs[0].Seq, evs[per-1].Seq)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		sess, events, err := dbs[1].SessionEvents(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != posts*per || sess.Events != posts*per {
			t.Fatalf("%d events, session counts %d", len(events), sess.Events)
		}
		for i, e := range events {
			if e.Seq != int64(i+1) || e.Type != engram.EventMessage {
				t.Fatalf("event %d: %+v", i, e)
			}
		}
		if err := dbs[0].SetEventMemories(ctx, "s", map[int64]string{2: "mem_x"}); err != nil {
			t.Fatal(err)
		}
		_, prev, err := dbs[1].AppendSessionEvents(ctx, "s", "", []*engram.SessionEvent{{Type: engram.EventDecision, Content: "d"}}, time.Hour)
		if err != nil || prev == nil || prev.Seq != posts*per {
			t.Fatalf("previous message: %+v %v", prev, err)
		}
		_, events, _ = dbs[0].SessionEvents(ctx, "s")
		if events[1].MemoryID != "mem_x" {
			t.Errorf("memory id of event 2: %q", events[1].MemoryID)
		}
		if !strings.HasPrefix(events[0].Content, "post ") || events[0].Role != "user" {
			t.Errorf("first event read back: %+v", events[0])
		}

		// Another tenant sees none of it; closing twice is a conflict.
		other := storetest.Tenant(t, dbs[0], "other")
		if _, err := dbs[0].FindSession(other, "s"); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("another tenant finds the session: %v", err)
		}
		if _, err := dbs[0].CloseSession(ctx, "s", engram.OutcomeSuccess, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := dbs[1].CloseSession(ctx, "s", engram.OutcomeFailure, ""); engram.ErrorCode(err) != engram.ECONFLICT {
			t.Errorf("second close: %v", err)
		}
		if _, _, err := dbs[1].AppendSessionEvents(ctx, "s", "", []*engram.SessionEvent{{Type: engram.EventDecision, Content: "late"}}, time.Hour); engram.ErrorCode(err) != engram.ECONFLICT {
			t.Errorf("event after close: %v", err)
		}
	})
}

// TestWorkingStateConcurrent: read-modify-write updates of one document
// from two stores apply one after the other, none lost, and a refused
// change writes nothing.
func TestWorkingStateConcurrent(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		dbs := []*store.DB{storetest.OpenWith(t, o), storetest.OpenWith(t, o)}
		ctx := storetest.Tenant(t, dbs[0], "acme")
		if _, _, err := dbs[0].AppendSessionEvents(ctx, "s", "r", []*engram.SessionEvent{{Type: engram.EventQuery, Content: "q"}}, time.Hour); err != nil {
			t.Fatal(err)
		}
		const n = 10
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				_, err := dbs[i%2].UpdateWorkingState(ctx, "s", engram.ScopeSession, "s", time.Hour, func(cur *engram.WorkingState) (*engram.WorkingState, error) {
					count := 0
					if cur != nil {
						var doc struct{ N int }
						_ = json.Unmarshal(cur.State, &doc)
						count = doc.N
					}
					return &engram.WorkingState{State: json.RawMessage(fmt.Sprintf(`{"N":%d}`, count+1))}, nil
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		st, err := dbs[1].FindWorkingState(ctx, engram.ScopeSession, "s")
		if err != nil || string(st.State) != fmt.Sprintf(`{"N":%d}`, n) || st.Version != n {
			t.Fatalf("after %d increments: %+v %v", n, st, err)
		}
		_, err = dbs[0].UpdateWorkingState(ctx, "s", engram.ScopeSession, "s", time.Hour, func(*engram.WorkingState) (*engram.WorkingState, error) {
			return nil, engram.Errorf(engram.EUNPROCESSABLE, "no")
		})
		if engram.ErrorCode(err) != engram.EUNPROCESSABLE {
			t.Fatalf("refused change: %v", err)
		}
		if st, _ := dbs[0].FindWorkingState(ctx, engram.ScopeSession, "s"); st.Version != n {
			t.Errorf("a refused change wrote version %d", st.Version)
		}
		// A session's first write may be its state: it creates the
		// session; an expired one stays absent.
		if _, err := dbs[0].UpdateWorkingState(ctx, "new", engram.ScopeSession, "new", time.Hour, func(*engram.WorkingState) (*engram.WorkingState, error) {
			return &engram.WorkingState{State: json.RawMessage(`{}`)}, nil
		}); err != nil {
			t.Fatalf("state as a session's first write: %v", err)
		}
		if sess, err := dbs[1].FindSession(ctx, "new"); err != nil || sess.Status != engram.SessionOpen || sess.Events != 0 {
			t.Errorf("session made by its state: %+v %v", sess, err)
		}
		if _, _, err := dbs[0].AppendSessionEvents(ctx, "gone", "", []*engram.SessionEvent{{Type: engram.EventQuery, Content: "q"}}, -time.Second); err != nil {
			t.Fatal(err)
		}
		if _, err := dbs[0].UpdateWorkingState(ctx, "gone", engram.ScopeSession, "gone", time.Hour, func(*engram.WorkingState) (*engram.WorkingState, error) {
			return &engram.WorkingState{State: json.RawMessage(`{}`)}, nil
		}); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("state of an expired session: %v", err)
		}
	})
}

// TestFindSessions: a tenant's live sessions, most recently active first,
// without expired ones or another tenant's; a bad limit is refused.
func TestFindSessions(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		other := storetest.Tenant(t, db, "other")
		msg := func() []*engram.SessionEvent {
			return []*engram.SessionEvent{{Type: engram.EventMessage, Role: "user", Content: "hello"}}
		}
		if got, err := db.FindSessions(ctx, 10); err != nil || len(got) != 0 {
			t.Fatalf("empty tenant: %v %v", got, err)
		}
		for _, id := range []string{"a", "b", "c"} {
			if _, _, err := db.AppendSessionEvents(ctx, id, "user-1", msg(), time.Hour); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Millisecond)
		}
		if _, _, err := db.AppendSessionEvents(ctx, "a", "", msg(), time.Hour); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
		if _, _, err := db.AppendSessionEvents(ctx, "gone", "", msg(), -time.Second); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.AppendSessionEvents(other, "theirs", "", msg(), time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CloseSession(ctx, "b", engram.OutcomeSuccess, ""); err != nil {
			t.Fatal(err)
		}
		got, err := db.FindSessions(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range got {
			ids = append(ids, s.ID)
		}
		if strings.Join(ids, ",") != "b,a,c" {
			t.Errorf("sessions %v, want b,a,c (closed b touched last, then a)", ids)
		}
		if got[1].Events != 2 || got[1].ResourceID != "user-1" || got[0].Status != engram.SessionClosed {
			t.Errorf("sessions read back wrong: %+v %+v", got[0], got[1])
		}
		if got, err := db.FindSessions(ctx, 1); err != nil || len(got) != 1 || got[0].ID != "b" {
			t.Errorf("limit 1: %v %v", got, err)
		}
		if _, err := db.FindSessions(ctx, 0); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("limit 0: %v, want EINVALID", err)
		}
	})
}
