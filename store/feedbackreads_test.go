package store_test

import (
	"math"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// TestFeedbackGroupReadsOnce: a group reads its raters' reputations and
// credits, the rater's cap, once for all its members, and answers as
// the same feedbacks one by one do: a credit committed before the group
// and still in the window counts, one past the window does not, and the
// group's own earlier votes count.
func TestFeedbackGroupReadsOnce(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		if f.cfg.RaterCap != 3 {
			t.Fatalf("rater cap %d; the test assumes 3", f.cfg.RaterCap)
		}
		t0 := time.Now().UTC().Truncate(time.Second)
		f.clock.set(t0)
		one, group := newGroupCase(t, f, "one"), newGroupCase(t, f, "group")
		up := func(c *groupCase, rater string) engram.FeedbackInput {
			return engram.FeedbackInput{RecallID: c.recall.ID, Thumb: engram.ThumbUp, Rater: rater}
		}
		// Before the group: one vote of r1 that the window will have left
		// behind, and one still in it.
		for _, at := range []time.Time{t0, t0.Add(f.cfg.RaterWindow - time.Minute)} {
			f.clock.set(at)
			for _, c := range []*groupCase{one, group} {
				if _, err := f.run(f.workflow(t, c.ctx, up(c, "r1"), nil)); err != nil {
					t.Fatal(err)
				}
			}
		}
		f.clock.set(t0.Add(f.cfg.RaterWindow + time.Second))
		raters := []string{"r1", "r1", "r2", "r1", "r2"}
		var seq []*engram.FeedbackResult
		for _, r := range raters {
			res, err := f.run(f.workflow(t, one.ctx, up(one, r), nil))
			if err != nil {
				t.Fatal(err)
			}
			seq = append(seq, res)
		}
		var fbs []store.GroupFeedback
		for _, r := range raters {
			fbs = append(fbs, f.workflow(t, group.ctx, up(group, r), nil))
		}
		var grp []*engram.FeedbackResult
		var errs []error
		// The group reads its raters' credits once (on PostgreSQL through
		// the connection, past the statement count); no member counts its
		// own.
		var own, once int64
		once = f.db.CountStatementsLike("SELECT rater, memory_id, created_at", func() {
			own = f.db.CountStatementsLike("SELECT memory_id, COUNT(*)", func() { grp, errs = f.db.SubmitFeedbackGroup(fbs) })
		})
		if own != 0 {
			t.Errorf("the group's members counted credits %d times themselves, want 0", own)
		}
		if want := map[string]int64{"postgres": 0, "sqlite": 1}[engine]; once != want {
			t.Errorf("the group read its raters' credits %d times, want %d", once, want)
		}
		for i := range raters {
			if errs[i] != nil {
				t.Fatalf("feedback %d of the group: %v", i, errs[i])
			}
			capped := func(res *engram.FeedbackResult) []bool {
				var out []bool
				for _, c := range res.Credited {
					out = append(out, c.Capped)
				}
				return out
			}
			s, g := capped(seq[i]), capped(grp[i])
			if len(s) != 3 || len(s) != len(g) {
				t.Fatalf("feedback %d credited %d one by one, %d in a group; want 3", i, len(s), len(g))
			}
			for j := range s {
				// r1: one vote in the window before, two applied in the
				// group, the third capped.
				want := i == 3
				if s[j] != want || g[j] != want {
					t.Errorf("feedback %d (%s) memory %d: capped one by one %v, in a group %v; want %v", i, raters[i], j, s[j], g[j], want)
				}
			}
		}
		for i := range one.mems {
			a, b := f.get(t, one.ctx, one.mems[i].ID), f.get(t, group.ctx, group.mems[i].ID)
			if a.Version != b.Version || a.UpCount != b.UpCount || math.Abs(a.Confidence-b.Confidence) > 1e-12 || math.Abs(a.Reward-b.Reward) > 1e-12 {
				t.Errorf("memory %d: one by one %+v, in a group %+v", i, a, b)
			}
		}
		ra, err := f.db.FindReputations(one.ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := f.db.FindReputations(group.ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(ra) != 2 || len(ra) != len(rb) {
			t.Fatalf("reputations: one by one %d, in a group %d; want 2", len(ra), len(rb))
		}
		for i := range ra {
			if ra[i].Rater != rb[i].Rater || ra[i].Votes != rb[i].Votes || math.Abs(ra[i].Agree-rb[i].Agree) > 1e-9 {
				t.Errorf("reputation %d: one by one %+v, in a group %+v", i, ra[i], rb[i])
			}
		}
	})
}
