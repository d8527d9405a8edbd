package working_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/index/indextest"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/router"
	"github.com/engram-memory/engram/store/storetest"
	"github.com/engram-memory/engram/working"
)

// TestCleanupEvery: the scheduled cleanup deletes a session once it has
// expired, and stops when its context ends.
func TestCleanupEvery(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	o := storetest.Options(t, "sqlite")
	o.Now = clock
	db := storetest.OpenWith(t, o)
	ctx := storetest.Tenant(t, db, "acme")
	routes := router.NewService(router.New(router.DefaultConfig()), db, 0)
	tok := storetest.Tokenizer(t)
	rec := learning.NewRecaller(indextest.Wrap(db), routes, learning.NewScorer(learning.DefaultScoreConfig(), clock), tok,
		engram.DefaultRecallConfig(), clock)
	sessions := engram.DefaultSessionsConfig()
	var logs syncBuffer
	w := working.New(db, db, routes, rec, tok, working.Config{Sessions: sessions, Limits: engram.DefaultLimitsConfig(),
		Categories: engram.DefaultCategories, MaxBudget: 8000}, clock, slog.New(slog.NewTextHandler(&logs, nil)))
	if _, err := w.AppendEvents(ctx, "s1", engram.EventBatch{Events: []*engram.SessionEvent{{Type: "message", Role: "user", Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	bg, stop := context.WithCancel(context.Background())
	var done sync.WaitGroup
	done.Go(func() { w.CleanupEvery(bg, 10*time.Millisecond) })
	time.Sleep(50 * time.Millisecond)
	if _, err := w.Events(ctx, "s1", engram.EventPage{}); err != nil {
		t.Fatalf("a live session was cleaned up: %v", err)
	}
	now.Add(int64(sessions.TTL + time.Minute))
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "expired sessions deleted") {
		if time.Now().After(deadline) {
			t.Fatalf("the scheduled cleanup never deleted the expired session; log:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n, err := w.Cleanup(context.Background()); n != 0 || err != nil {
		t.Errorf("left for a second cleanup: %d %v", n, err)
	}
	stop()
	done.Wait()
}

// syncBuffer is a log destination safe to read while the loop writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
