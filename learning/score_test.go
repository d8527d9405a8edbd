package learning

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
)

var scoreNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func fixedClock() time.Time { return scoreNow }

func newTestScorer(t testing.TB) *Scorer {
	t.Helper()
	cfg := DefaultScoreConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return NewScorer(cfg, fixedClock)
}

// daysAgo returns the time d days before scoreNow.
func daysAgo(d float64) time.Time {
	return scoreNow.Add(-time.Duration(d * 24 * float64(time.Hour)))
}

func TestScoreConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*ScoreConfig)
		want   string // substring of the error; "" for none
	}{
		{"default", func(*ScoreConfig) {}, ""},
		{"missing priority", func(c *ScoreConfig) { delete(c.Decay, engram.P2) }, "no decay for P2"},
		{"unknown priority", func(c *ScoreConfig) { c.Decay["P9"] = Decay{Stability: 5, Growth: 1} }, `unknown priority "P9"`},
		{"P0 decays", func(c *ScoreConfig) { c.Decay[engram.P0] = Decay{Stability: 30, Floor: 1, Growth: 1} }, "P0 identity"},
		{"P3 never decays", func(c *ScoreConfig) { c.Decay[engram.P3] = Decay{Stability: 0, Growth: 1.3} }, "P3 stability"},
		{"floor above 1", func(c *ScoreConfig) { c.Decay[engram.P1] = Decay{Stability: 365, Floor: 1.2, Growth: 2} }, "P1 floor"},
		{"floor NaN", func(c *ScoreConfig) { c.Decay[engram.P1] = Decay{Stability: 365, Floor: math.NaN(), Growth: 2} }, "P1 floor"},
		{"growth below 1", func(c *ScoreConfig) { c.Decay[engram.P2] = Decay{Stability: 90, Floor: 0.1, Growth: 0.9} }, "P2 growth"},
		{"shrink 1", func(c *ScoreConfig) { c.Shrink = 1 }, "shrink"},
		{"shrink 0", func(c *ScoreConfig) { c.Shrink = 0 }, "shrink"},
		{"min stability 0", func(c *ScoreConfig) { c.MinStability = 0 }, "min stability"},
		{"max below min", func(c *ScoreConfig) { c.MaxStability = 0.5 }, "max stability"},
		{"max infinite", func(c *ScoreConfig) { c.MaxStability = math.Inf(1) }, "max stability"},
		{"prior 0", func(c *ScoreConfig) { c.PriorDown = 0 }, "Beta prior"},
		{"revision hides", func(c *ScoreConfig) { c.RevisionFactor = 0 }, "revision factor"},
		{"revision boosts", func(c *ScoreConfig) { c.RevisionFactor = 1.5 }, "revision factor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultScoreConfig()
			tt.change(&cfg)
			err := cfg.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.want != "" && err == nil:
				t.Fatalf("Validate() = nil, want an error containing %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("Validate() = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestScore(t *testing.T) {
	s := newTestScorer(t)
	readNow := scoreNow
	future := scoreNow.Add(48 * time.Hour)
	tests := []struct {
		name string
		m    engram.Memory
		rel  float64
		want engram.ScoreBreakdown
	}{
		{
			name: "P2 at its stability",
			m:    engram.Memory{Priority: engram.P2, Confidence: 0.8, ReinforcedAt: daysAgo(90)},
			rel:  1,
			want: engram.ScoreBreakdown{Relevance: 1, Reward: 0.5, Confidence: 0.8, Retention: math.Exp(-1), Revision: 1,
				AgeDays: 90, Stability: 90, Score: 0.5 * 0.8 * math.Exp(-1)},
		},
		{
			// Read today, voted down and re-labelled today (UpdatedAt): the
			// clock still runs from the last reinforcement, 14 days ago.
			name: "votes; reads and other changes do not reset the clock",
			m: engram.Memory{Priority: engram.P3, Confidence: 1, UpCount: 3, DownCount: 1,
				ReinforcedAt: daysAgo(14), UpdatedAt: scoreNow, LastAccessedAt: &readNow},
			rel: 0.5,
			want: engram.ScoreBreakdown{Relevance: 0.5, Reward: 8.0 / 13, // Beta(5, 5), up votes only: (3+5)/(3+10)
				Confidence: 1, Retention: math.Exp(-1), Revision: 1,
				AgeDays: 14, Stability: 14, Score: 0.5 * 8.0 / 13 * math.Exp(-1)},
		},
		{
			name: "P1 floor",
			m:    engram.Memory{Priority: engram.P1, Confidence: 1, ReinforcedAt: daysAgo(3650)},
			rel:  1,
			want: engram.ScoreBreakdown{Relevance: 1, Reward: 0.5, Confidence: 1, Retention: 0.3, Revision: 1,
				AgeDays: 3650, Stability: 365, Score: 0.15},
		},
		{
			name: "stored stability wins",
			m:    engram.Memory{Priority: engram.P3, Stability: 28, Confidence: 1, ReinforcedAt: daysAgo(28)},
			rel:  1,
			want: engram.ScoreBreakdown{Relevance: 1, Reward: 0.5, Confidence: 1, Retention: math.Exp(-1), Revision: 1,
				AgeDays: 28, Stability: 28, Score: 0.5 * math.Exp(-1)},
		},
		{
			name: "P0 never decays",
			m:    engram.Memory{Priority: engram.P0, Stability: 5, Confidence: 1, ReinforcedAt: daysAgo(10000)},
			rel:  1,
			want: engram.ScoreBreakdown{Relevance: 1, Reward: 0.5, Confidence: 1, Retention: 1, Revision: 1,
				AgeDays: 10000, Stability: 0, Score: 0.5},
		},
		{
			name: "needs revision is demoted",
			m:    engram.Memory{Priority: engram.P1, Confidence: 1, NeedsRevision: true, ReinforcedAt: scoreNow},
			rel:  1,
			want: engram.ScoreBreakdown{Relevance: 1, Reward: 0.5, Confidence: 1, Retention: 1, Revision: 0.3,
				AgeDays: 0, Stability: 365, Score: 0.15},
		},
		{
			name: "future timestamp counts as now",
			m:    engram.Memory{Priority: engram.P3, Confidence: 1, ReinforcedAt: future},
			rel:  1,
			want: engram.ScoreBreakdown{Relevance: 1, Reward: 0.5, Confidence: 1, Retention: 1, Revision: 1,
				AgeDays: 0, Stability: 14, Score: 0.5},
		},
		{
			name: "unknown priority scores as P2",
			m:    engram.Memory{Priority: "", Confidence: 1, ReinforcedAt: daysAgo(90)},
			rel:  1,
			want: engram.ScoreBreakdown{Relevance: 1, Reward: 0.5, Confidence: 1, Retention: math.Exp(-1), Revision: 1,
				AgeDays: 90, Stability: 90, Score: 0.5 * math.Exp(-1)},
		},
		{
			name: "out of range inputs are clamped",
			m:    engram.Memory{Priority: engram.P2, Confidence: 7, UpCount: -4, DownCount: -2, Stability: math.NaN(), ReinforcedAt: scoreNow},
			rel:  2,
			want: engram.ScoreBreakdown{Relevance: 1, Reward: 0.5, Confidence: 1, Retention: 1, Revision: 1,
				AgeDays: 0, Stability: 90, Score: 0.5},
		},
		{
			name: "NaN relevance and confidence count as 0",
			m:    engram.Memory{Priority: engram.P2, Confidence: math.NaN(), ReinforcedAt: scoreNow},
			rel:  math.NaN(),
			want: engram.ScoreBreakdown{Relevance: 0, Reward: 0.5, Confidence: 0, Retention: 1, Revision: 1,
				AgeDays: 0, Stability: 90, Score: 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Score(&tt.m, tt.rel)
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"Relevance", got.Relevance, tt.want.Relevance},
				{"Reward", got.Reward, tt.want.Reward},
				{"Confidence", got.Confidence, tt.want.Confidence},
				{"Retention", got.Retention, tt.want.Retention},
				{"Revision", got.Revision, tt.want.Revision},
				{"AgeDays", got.AgeDays, tt.want.AgeDays},
				{"Stability", got.Stability, tt.want.Stability},
				{"Score", got.Score, tt.want.Score},
			} {
				if math.Abs(f.got-f.want) > 1e-9 {
					t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
				}
			}
		})
	}
}

func TestReinforce(t *testing.T) {
	s := newTestScorer(t)
	tests := []struct {
		p         engram.Priority
		stability float64
		positive  bool
		want      float64
	}{
		{engram.P0, 0, true, 0},
		{engram.P0, 0, false, 0},
		{engram.P1, 365, true, 730},
		{engram.P1, 0, true, 730}, // 0 stands for the default
		{engram.P2, 90, true, 135},
		{engram.P3, 14, true, 14 * 1.3},
		{engram.P2, 90, false, 45},
		{engram.P3, 1.5, false, 1},   // never below one day
		{engram.P3, 0.5, false, 0.5}, // already below a day: never grows on a negative use
		{engram.P1, 30000, true, 36500},
		{engram.P1, 50000, true, 50000}, // above the cap: a positive use never lowers it
	}
	for _, tt := range tests {
		if got := s.Reinforce(tt.p, tt.stability, tt.positive); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Reinforce(%s, %v, %v) = %v, want %v", tt.p, tt.stability, tt.positive, got, tt.want)
		}
	}
}

// randomMemory returns a memory with every score input drawn at random,
// a few of them out of range.
func randomMemory(r *rand.Rand) engram.Memory {
	m := engram.Memory{
		Priority:      priorities[r.IntN(len(priorities))],
		Confidence:    r.Float64(),
		UpCount:       r.Int64N(40),
		DownCount:     r.Int64N(40),
		NeedsRevision: r.IntN(4) == 0,
		UpdatedAt:     daysAgo(r.Float64() * 2000),
	}
	switch r.IntN(10) {
	case 0:
		m.Confidence = 1 + r.Float64()
	case 1:
		m.Confidence = -r.Float64()
	}
	if r.IntN(2) == 0 {
		m.Stability = 0.1 + r.Float64()*1000
	}
	switch r.IntN(4) {
	case 0:
		at := daysAgo(r.Float64() * 100)
		m.LastAccessedAt = &at
	case 1:
		at := scoreNow.Add(time.Duration(r.IntN(48)) * time.Hour)
		m.LastAccessedAt = &at
	}
	return m
}

func TestScoreProperties(t *testing.T) {
	s := newTestScorer(t)
	r := rand.New(rand.NewPCG(1, 2))
	checkRange := func(t *testing.T, b engram.ScoreBreakdown) {
		t.Helper()
		for name, v := range map[string]float64{"relevance": b.Relevance, "reward": b.Reward, "confidence": b.Confidence,
			"retention": b.Retention, "revision": b.Revision, "score": b.Score} {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("%s = %v, out of [0, 1]: %+v", name, v, b)
			}
		}
		if !(b.AgeDays >= 0) || !(b.Stability >= 0) {
			t.Fatalf("age %v or stability %v negative or NaN", b.AgeDays, b.Stability)
		}
	}
	for i := range 2000 {
		m := randomMemory(r)
		rel := r.Float64()*1.4 - 0.2
		base := s.Score(&m, rel)
		checkRange(t, base)

		more := []struct {
			name   string
			change func(*engram.Memory) float64 // returns the relevance to use
			up     bool                         // score may only go up (else only down)
		}{
			{"relevance", func(*engram.Memory) float64 { return rel + r.Float64() }, true},
			{"confidence", func(c *engram.Memory) float64 { c.Confidence += r.Float64(); return rel }, true},
			{"up votes", func(c *engram.Memory) float64 { c.UpCount += 1 + r.Int64N(20); return rel }, true},
			{"down votes", func(c *engram.Memory) float64 { c.DownCount += 1 + r.Int64N(20); return rel }, false},
			{"age", func(c *engram.Memory) float64 {
				older := time.Duration(r.Float64() * 500 * 24 * float64(time.Hour))
				c.UpdatedAt = c.UpdatedAt.Add(-older)
				if c.LastAccessedAt != nil {
					at := c.LastAccessedAt.Add(-older)
					c.LastAccessedAt = &at
				}
				return rel
			}, false},
		}
		for _, tt := range more {
			c := m
			got := s.Score(&c, tt.change(&c))
			checkRange(t, got)
			if tt.up && got.Score < base.Score || !tt.up && got.Score > base.Score {
				t.Fatalf("case %d: more %s moved the score the wrong way: %v → %v (%+v)", i, tt.name, base.Score, got.Score, m)
			}
		}

		if m.Priority == engram.P0 {
			old := m
			old.UpdatedAt, old.LastAccessedAt = daysAgo(r.Float64()*1e5), nil
			if b := s.Score(&old, rel); b.Retention != 1 {
				t.Fatalf("case %d: P0 retention %v after %v days", i, b.Retention, b.AgeDays)
			}
		}

		flagged := m
		flagged.NeedsRevision = true
		if b := s.Score(&flagged, rel); b.Score > base.Score || base.Score > 0 && b.Score <= 0 {
			t.Fatalf("case %d: needs_revision score %v (unflagged %v): demote, never hide", i, b.Score, base.Score)
		}

		// A positive use never lowers retention at any later age; a
		// negative one never raises it, and shrinks S above a day.
		up := m
		up.Stability = s.Reinforce(m.Priority, m.Stability, true)
		down := m
		down.Stability = s.Reinforce(m.Priority, m.Stability, false)
		for _, age := range []float64{0, 1, 7, 30, 365, 3650, r.Float64() * 5000} {
			m.UpdatedAt, up.UpdatedAt, down.UpdatedAt = daysAgo(age), daysAgo(age), daysAgo(age)
			m.LastAccessedAt, up.LastAccessedAt, down.LastAccessedAt = nil, nil, nil
			rm, ru, rd := s.Score(&m, 1).Retention, s.Score(&up, 1).Retention, s.Score(&down, 1).Retention
			if ru < rm || rd > rm {
				t.Fatalf("case %d at %v days: retention %v, after a positive use %v, after a negative one %v", i, age, rm, ru, rd)
			}
		}
		if m.Priority != engram.P0 {
			st := s.Score(&m, 1).Stability
			if st > 1 && !(down.Stability < st && down.Stability >= 1) {
				t.Fatalf("case %d: negative use took stability %v to %v", i, st, down.Stability)
			}
			if up.Stability < st {
				t.Fatalf("case %d: positive use took stability %v to %v", i, st, up.Stability)
			}
		}
	}
}

func BenchmarkScore(b *testing.B) {
	s := newTestScorer(b)
	r := rand.New(rand.NewPCG(3, 4))
	ms := make([]engram.Memory, 256)
	for i := range ms {
		ms[i] = randomMemory(r)
	}
	b.ReportAllocs()
	var sink float64
	for i := 0; b.Loop(); i++ {
		sink += s.Score(&ms[i%len(ms)], 0.7).Score
	}
	_ = sink
}

// The default settings give a valid scorer.
func TestDefaultScoreConfigValid(t *testing.T) {
	if err := DefaultScoreConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}
