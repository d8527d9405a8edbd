package feed_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/feed"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

func write(t *testing.T, ctx context.Context, db *store.DB, n int) {
	t.Helper()
	for i := range n {
		if _, err := db.CreateMemory(ctx, &engram.Memory{Content: fmt.Sprintf("memory %d %d", i, time.Now().UnixNano())}); err != nil {
			t.Fatal(err)
		}
	}
}

// A consumer that keeps failing is retried after one poll, then after
// twice as long each time, not in a loop; the follower says so, and
// recovers when the consumer does.
func TestBackoff(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "acme")
	write(t, ctx, db, 3)
	var calls atomic.Int64
	var failing atomic.Bool
	failing.Store(true)
	f := feed.New(feed.Config{Consumer: "c", Holder: "a", Cursors: db,
		Apply: func(ctx context.Context, _ string, after int64) (int64, error) {
			calls.Add(1)
			if failing.Load() {
				return after, errors.New("no space left on device")
			}
			changes, err := db.Changes(ctx, after, 100)
			if err != nil || len(changes) == 0 {
				return after, err
			}
			return changes[len(changes)-1].Seq, nil
		}})
	run, stop := context.WithCancel(context.Background())
	var done sync.WaitGroup
	done.Go(func() { f.Run(run, 10*time.Millisecond) })
	time.Sleep(700 * time.Millisecond)
	// Retries at about 0, 10, 30, 70, 150, 310 and 630 ms: 7; a poll loop
	// would have made 70.
	if n := calls.Load(); n < 4 || n > 9 {
		t.Fatalf("%d attempts in 700 ms with a 10 ms poll: not an exponential back-off", n)
	}
	st := f.Status()
	if st.State != feed.StateBackingOff || st.Errors != calls.Load() || st.LastError != "no space left on device" ||
		st.ErrorAt == nil || st.Backoff < 80*time.Millisecond || st.Lag != 3 {
		t.Fatalf("status while failing: %+v", st)
	}
	failing.Store(false)
	deadline := time.Now().Add(5 * time.Second)
	for f.Status().State != feed.StateOK || f.Status().Lag != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no recovery: %+v", f.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := f.Status(); st.Backoff != 0 || st.Errors == 0 || st.LastError == "" {
		t.Fatalf("after recovery the counts stay, the back-off goes: %+v", st)
	}
	stop()
	done.Wait()
	if s := f.Status().State; s != feed.StateStopped {
		t.Fatalf("state after Run: %s", s)
	}
}

func TestBackoffBounded(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "acme")
	write(t, ctx, db, 1)
	f := feed.New(feed.Config{Consumer: "c", Holder: "a", Cursors: db,
		Apply: func(_ context.Context, _ string, after int64) (int64, error) { return after, errors.New("down") }})
	run, stop := context.WithCancel(context.Background())
	var done sync.WaitGroup
	done.Go(func() { f.Run(run, 20*time.Second) })
	deadline := time.Now().Add(5 * time.Second)
	for f.Status().Errors < 1 {
		if time.Now().After(deadline) {
			t.Fatal("no step")
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	done.Wait()
	for n, want := range map[int]time.Duration{1: 20 * time.Second, 2: 40 * time.Second, 3: time.Minute, 30: time.Minute} {
		if got := feed.BackoffAfter(20*time.Second, n); got != want {
			t.Errorf("back-off after %d failures with a 20 s poll: %s, want %s", n, got, want)
		}
	}
}

// A lease is renewed while the consumer works, however long it takes; a
// follower stopped in the middle of a step records how far it got and
// releases its lease, so another process takes the tenant at once.
func TestLeaseRenewedAndReleased(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		write(t, ctx, db, 2)
		started := make(chan struct{})
		slow := feed.New(feed.Config{Consumer: "c", Holder: "slow", Cursors: db, Lease: 300 * time.Millisecond,
			Apply: func(ctx context.Context, _ string, after int64) (int64, error) {
				close(started)
				<-ctx.Done() // works until stopped, then reports one change applied
				return after + 1, ctx.Err()
			}})
		var other []int64
		fast := feed.New(feed.Config{Consumer: "c", Holder: "fast", Cursors: db, Lease: 300 * time.Millisecond,
			Apply: func(_ context.Context, _ string, after int64) (int64, error) {
				other = append(other, after)
				return after + 1, nil
			}})
		run, stop := context.WithCancel(context.Background())
		var done sync.WaitGroup
		done.Go(func() { slow.Run(run, 10*time.Millisecond) })
		<-started
		time.Sleep(time.Second) // more than three leases
		if worked, err := fast.Step(context.Background()); worked || err != nil {
			t.Fatalf("a renewed lease was taken over: %v %v", worked, err)
		}
		stop()
		done.Wait()
		if worked, err := fast.Step(context.Background()); !worked || err != nil || len(other) != 1 || other[0] != 1 {
			t.Fatalf("after the holder stopped, another takes the tenant at once from where it got: %v %v %v", worked, err, other)
		}
	})
}

// A lease that ran out under a consumer (a process stalled longer than
// the lease) cancels the consumer's work and fails the step.
func TestLeaseLost(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "acme")
	write(t, ctx, db, 1)
	tenant := engram.TenantFromContext(ctx)
	f := feed.New(feed.Config{Consumer: "c", Holder: "a", Cursors: db, Lease: 150 * time.Millisecond,
		Apply: func(ctx context.Context, _ string, after int64) (int64, error) {
			// Another holder takes the tenant (as if this one had stalled).
			if err := db.ReleaseFeed(ctx, "c", "a"); err != nil {
				return after, err
			}
			if _, _, ok, err := db.ClaimFeed(ctx, "c", "b", time.Minute); !ok || err != nil {
				return after, fmt.Errorf("claim by b: %v %v", ok, err)
			}
			<-ctx.Done()
			return after, nil
		}})
	_, err := f.Step(context.Background())
	if err == nil || f.Status().Errors != 1 || !strings.Contains(f.Status().LastError, "lease ran out") {
		t.Fatalf("a lost lease must fail the step: %v %+v", err, f.Status())
	}
	if _, after, ok, _ := db.ClaimFeed(ctx, "c", "c", time.Minute); ok {
		t.Fatalf("b's lease was ended by a: claimed %s at %d", tenant, after)
	}
}
