package sleep_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/reflections"
	"github.com/engram-memory/engram/sleep"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// clock is a settable time for the store, the scorer and the sleep.
type clock struct{ t atomic.Int64 }

func (c *clock) now() time.Time   { return time.Unix(0, c.t.Load()).UTC() }
func (c *clock) set(t time.Time)  { c.t.Store(t.UnixNano()) }
func newClock(t time.Time) *clock { c := &clock{}; c.set(t); return c }
func words(i int, p engram.Priority) string {
	return fmt.Sprintf("note %d of priority %s: %s", i, p, []string{"alpha", "bravo", "charlie", "delta", "echo",
		"foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"}[i%12])
}

func open(t *testing.T, engine string, c *clock) (*store.DB, context.Context) {
	o := storetest.Options(t, engine)
	o.Now = c.now
	db := storetest.OpenWith(t, o)
	return db, storetest.Tenant(t, db, "acme")
}

// TestArchiveAgreesWithScore: a memory is archived by the sleep exactly
// when the recall score's retention, before any floor, is below
// sleep.archive_below: the two read one formula. Ages straddle each
// priority's threshold (P3 at about 55 days, P2 352, P1 1,428).
func TestArchiveAgreesWithScore(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		c := newClock(now)
		db, ctx := open(t, engine, c)
		scoring := engram.DefaultScoringConfig()
		scoring.P1Floor, scoring.P2Floor, scoring.P3Floor = 0, 0, 0 // the score's retention is then the formula's
		i := 0
		for _, p := range []engram.Priority{engram.P1, engram.P2, engram.P3} {
			for _, age := range []float64{1, 54, 55, 351, 352.5, 353, 1427, 1429} {
				c.set(now.Add(-time.Duration(age * 24 * float64(time.Hour))))
				if _, err := db.CreateMemory(ctx, &engram.Memory{Content: words(i, p), Category: []string{"work", "life"}[i%2], Priority: p}); err != nil {
					t.Fatal(err)
				}
				i++
			}
		}
		c.set(now)
		page, err := db.FindMemories(ctx, engram.MemoryFilter{Limit: 100})
		if err != nil || len(page.Items) != i {
			t.Fatalf("%d memories (%v)", len(page.Items), err)
		}
		const below = 0.02
		scorer := learning.NewScorer(learning.NewScoreConfig(scoring), c.now)
		want := map[string]bool{}
		archived := 0
		for _, m := range page.Items {
			want[m.ID] = scorer.Score(m, 1).Retention < below
			if want[m.ID] {
				archived++
			}
		}
		if archived == 0 || archived == i {
			t.Fatalf("the ages should straddle the thresholds: %d of %d decayed", archived, i)
		}
		refl := reflections.New(db, reflections.Config{Categories: engram.DefaultCategories}, nil)
		s := sleep.New(db, refl, sleep.Config{MergeSimilarity: 0.9, ArchiveBelow: below, CompactAfter: time.Hour, Scoring: scoring}, c.now)
		res, err := s.Sleep(ctx)
		if err != nil || res.Archived != archived || res.Merged != 0 {
			t.Fatalf("sleep: %+v %v; the score says %d decayed", res, err, archived)
		}
		for id, decayed := range want {
			m, err := db.FindMemoryByID(ctx, id)
			if err != nil || m.Archived != decayed {
				t.Errorf("%s (%s, %.1f days): archived %v, the score says decayed %v (%v)", id, m.Priority, m.AgeDays(now), m.Archived, decayed, err)
			}
		}
	})
}

// TestSleepAll: every tenant is slept, or only the one named; a name that
// is no tenant is ENOTFOUND.
func TestSleepAll(t *testing.T) {
	c := newClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	db, _ := open(t, "sqlite", c)
	storetest.Tenant(t, db, "zeta")
	refl := reflections.New(db, reflections.Config{Categories: engram.DefaultCategories}, nil)
	s := sleep.New(db, refl, sleep.Config{MergeSimilarity: 0.9, ArchiveBelow: 0.02, CompactAfter: time.Hour,
		Scoring: engram.DefaultScoringConfig()}, c.now)
	var slept []string
	report := func(tenant *engram.Tenant, r *engram.SleepResult, err error) {
		if err != nil || r == nil {
			t.Errorf("%s: %+v %v", tenant.Name, r, err)
		}
		slept = append(slept, tenant.Name)
	}
	if err := s.SleepAll(context.Background(), "", report); err != nil || fmt.Sprint(slept) != "[acme zeta]" {
		t.Fatalf("every tenant: %v %v", slept, err)
	}
	slept = nil
	if err := s.SleepAll(context.Background(), "zeta", report); err != nil || fmt.Sprint(slept) != "[zeta]" {
		t.Fatalf("one tenant: %v %v", slept, err)
	}
	if err := s.SleepAll(context.Background(), "nobody", report); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Fatalf("unknown tenant: %v", err)
	}
}
