package learning

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/engram-memory/engram"
)

// Decay says how the memories of one priority fade and how use changes that.
type Decay struct {
	// Stability is the default Ebbinghaus stability S in days, used when a
	// memory stores none; 0 means the memory never decays.
	Stability float64
	// Floor is the retention a memory never falls below, however old.
	Floor float64
	// Growth multiplies S on every positive use.
	Growth float64
}

// ScoreConfig holds the constants of the recall score (DESIGN §3, Score).
type ScoreConfig struct {
	// Decay has one entry per priority. P0 identity memories never decay,
	// so their entry must be {Stability: 0, Floor: 1, Growth: 1}.
	Decay map[engram.Priority]Decay
	// Shrink multiplies S on every negative use, in (0, 1).
	Shrink float64
	// MinStability is the S, in days, that negative uses never shrink a
	// decaying memory below, so one bad week cannot erase it overnight.
	MinStability float64
	// MaxStability caps the S that positive uses grow, so that a memory
	// used thousands of times keeps a finite S (2^1024 overflows).
	MaxStability float64
	// PriorUp and PriorDown are α and β of the Beta prior of the reward
	// factor: reward = (up + α) / (up + α + β), so one vote does not swing
	// it and a memory nobody rated sits at α / (α + β). Down votes do not
	// lower it (see Scorer.reward).
	PriorUp, PriorDown float64
	// RevisionFactor multiplies the score of a needs_revision memory, in
	// (0, 1]: such memories are demoted, never hidden.
	RevisionFactor float64
	// SupersededFactor multiplies the score of a memory that a newer one
	// of the same origin and subject supersedes among a recall's
	// candidates (a knowledge update, see Recaller.supersede), in (0, 1];
	// 1 turns knowledge updates off.
	SupersededFactor float64
}

// NewScoreConfig maps the scoring settings to the scorer's constants.
func NewScoreConfig(c engram.ScoringConfig) ScoreConfig {
	return ScoreConfig{
		Decay: map[engram.Priority]Decay{
			engram.P0: {Stability: 0, Floor: 1, Growth: 1},
			engram.P1: {Stability: c.P1StabilityDays, Floor: c.P1Floor, Growth: c.P1Growth},
			engram.P2: {Stability: c.P2StabilityDays, Floor: c.P2Floor, Growth: c.P2Growth},
			engram.P3: {Stability: c.P3StabilityDays, Floor: c.P3Floor, Growth: c.P3Growth},
		},
		Shrink:           c.Shrink,
		MinStability:     c.MinStabilityDays,
		MaxStability:     c.MaxStabilityDays,
		PriorUp:          c.PriorUp,
		PriorDown:        c.PriorDown,
		RevisionFactor:   c.RevisionFactor,
		SupersededFactor: c.SupersededFactor,
	}
}

// DefaultScoreConfig returns the scorer's constants for the default
// settings (engram.DefaultScoringConfig).
func DefaultScoreConfig() ScoreConfig { return NewScoreConfig(engram.DefaultScoringConfig()) }

// priorities lists P0–P3 in the order of Scorer.decay.
var priorities = [...]engram.Priority{engram.P0, engram.P1, engram.P2, engram.P3}

// Validate reports every constant that is missing or out of range.
func (c ScoreConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("learning: score config: "+format, args...))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if !(c.MinStability > 0) || !finite(c.MinStability) {
		bad("min stability must be a positive number of days, got %v", c.MinStability)
	}
	if !(c.MaxStability >= c.MinStability) || !finite(c.MaxStability) {
		bad("max stability must be finite and at least the min stability, got %v", c.MaxStability)
	}
	for _, p := range priorities {
		d, ok := c.Decay[p]
		switch {
		case !ok:
			bad("no decay for %s", p)
		case p == engram.P0:
			if d != (Decay{Stability: 0, Floor: 1, Growth: 1}) {
				bad("P0 identity memories never decay: want stability 0, floor 1, growth 1, got %+v", d)
			}
		default:
			if !(d.Stability >= c.MinStability && d.Stability <= c.MaxStability) {
				bad("%s stability must be between the min and max stability, got %v", p, d.Stability)
			}
			if !(d.Floor >= 0 && d.Floor <= 1) {
				bad("%s floor must be between 0 and 1, got %v", p, d.Floor)
			}
			if !(d.Growth >= 1) || !finite(d.Growth) {
				bad("%s growth must be at least 1, got %v", p, d.Growth)
			}
		}
	}
	for p := range c.Decay {
		if !p.Valid() {
			bad("decay for unknown priority %q", p)
		}
	}
	if !(c.Shrink > 0 && c.Shrink < 1) {
		bad("shrink must be between 0 and 1 (exclusive), got %v", c.Shrink)
	}
	if !(c.PriorUp > 0) || !finite(c.PriorUp) || !(c.PriorDown > 0) || !finite(c.PriorDown) {
		bad("Beta prior must be positive, got α=%v β=%v", c.PriorUp, c.PriorDown)
	}
	if !(c.RevisionFactor > 0 && c.RevisionFactor <= 1) {
		bad("revision factor must be in (0, 1], got %v", c.RevisionFactor)
	}
	if !(c.SupersededFactor > 0 && c.SupersededFactor <= 1) {
		bad("superseded factor must be in (0, 1], got %v", c.SupersededFactor)
	}
	return errors.Join(errs...)
}

// Scorer scores recall candidates and computes how use changes their
// stability. It is safe for concurrent use.
type Scorer struct {
	cfg    ScoreConfig
	decay  [len(priorities)]Decay // by priorityIndex, so Score does no map lookup
	now    engram.Clock
	policy Policy
}

// NewScorer returns a Scorer for cfg, which should have passed Validate;
// a priority missing from cfg.Decay takes its default, and every factor is
// clamped to [0, 1] whatever cfg says. A nil now means time.Now.
func NewScorer(cfg ScoreConfig, now engram.Clock) *Scorer {
	if now == nil {
		now = time.Now
	}
	def := DefaultScoreConfig()
	s := &Scorer{cfg: cfg, now: now, policy: DefaultPolicy()}
	for i, p := range priorities {
		d, ok := cfg.Decay[p]
		if !ok {
			d = def.Decay[p]
		}
		s.decay[i] = d
	}
	// The map is the caller's; the Scorer keeps only its copy in decay.
	s.cfg.Decay = nil
	return s
}

// priorityIndex maps p to its index in priorities. An unknown priority is
// scored as P2, the same fallback the store uses for its default stability.
func priorityIndex(p engram.Priority) int {
	switch p {
	case engram.P0:
		return 0
	case engram.P1:
		return 1
	case engram.P3:
		return 3
	default:
		return 2
	}
}

// Score returns m's score for a query it matches with relevance, and the
// breakdown of that score: relevance × reward × confidence × retention ×
// revision, each factor in [0, 1]. Helpfulness is 1 here; the recall
// multiplies it in once the memory's evidence is read (see Helpful).
func (s *Scorer) Score(m *engram.Memory, relevance float64) engram.ScoreBreakdown {
	b := engram.ScoreBreakdown{
		Relevance:     unit(relevance),
		Reward:        s.reward(m.UpCount),
		Confidence:    unit(m.Confidence),
		Revision:      1,
		Superseded:    1,
		Helpfulness:   1,
		OriginFactor:  1,
		FeatureFactor: 1,
	}
	if m.NeedsRevision {
		b.Revision = unit(s.cfg.RevisionFactor)
	}
	b.AgeDays = m.AgeDays(s.now())
	b.Stability, b.Retention = s.retention(m.Priority, engram.EmotionStability(m.Stability, engram.EmotionOf(m)), b.AgeDays)
	b.Score = b.Relevance * b.Reward * b.Confidence * b.Retention * b.Revision
	emotionWeight(m, &b)
	return b
}

// reward is the reward factor: the Beta posterior mean (up + α) /
// (up + α + β), which each answer the memory carried and a user approved
// raises. A down vote does not lower it: a memory is injected into a bad
// answer far more often for being about the question's topic than for
// misleading it, so down votes on true memories mark them as central, not
// wrong. On the learning benchmark's plain LoCoMo, demoting the memories
// that were never the evidence of any training question lowers held-out
// recall@10 even when the evidence is known (−0.0026 over the tuning
// seeds), and no weight of down votes in this factor tried (1, ½, ¼, or
// read against the tenant's answers) left the plain lift above 0.
// Down votes sink a memory where they stand out: helpfulness (its record
// against its origin's, see Helpful), needs_revision and stability.
func (s *Scorer) reward(up int64) float64 {
	u := float64(max(up, 0))
	return unit((u + s.cfg.PriorUp) / (u + s.cfg.PriorUp + s.cfg.PriorDown))
}

// retention returns the stability in effect (0 for no decay) and the
// retention max(floor, e^(−t/S)) after ageDays (engram.Retention, which
// the sleep cycle archives by).
func (s *Scorer) retention(p engram.Priority, stability, ageDays float64) (float64, float64) {
	if p == engram.P0 {
		return 0, 1
	}
	d := s.decay[priorityIndex(p)]
	st := d.Stability
	if stability > 0 {
		st = stability
	}
	if !(st > 0) {
		return 0, 1
	}
	return st, unit(max(d.Floor, engram.Retention(ageDays, st)))
}

// Reinforce returns the stability of a memory of priority p after one
// positive or negative use. A stability of 0 stands for p's default. A
// positive use multiplies S by p's growth (up to MaxStability); a negative
// one multiplies it by Shrink (down to MinStability). Neither ever moves S
// the wrong way, and P0 is returned unchanged.
func (s *Scorer) Reinforce(p engram.Priority, stability float64, positive bool) float64 {
	if p == engram.P0 {
		return stability
	}
	d := s.decay[priorityIndex(p)]
	st := stability
	if !(st > 0) {
		st = d.Stability
	}
	if positive {
		return max(st, min(s.cfg.MaxStability, st*d.Growth))
	}
	return min(st, max(s.cfg.MinStability, st*s.cfg.Shrink))
}

// unit clamps x to [0, 1], mapping NaN to 0 so that a corrupt value can
// only lower a score, never poison the ranking.
func unit(x float64) float64 {
	switch {
	case x > 1:
		return 1
	case x >= 0:
		return x
	default:
		return 0
	}
}

// Helpful returns the helpfulness factor of a memory with evidence e and
// the part of it its origin earned. The origin's factor is its shrunk
// good-rate over the tenant's main origin's (see originRate), to the
// power Policy.OriginPower, capped at 1: an origin whose memories keep turning
// up in bad answers sinks all of them, also those nobody has judged
// yet. The feature factor (see Features) does the same for every kind
// of memory the model has learned to distrust. The memory's own factor is its good-rate, shrunk towards the
// origin's, helpZ standard deviations up (see credibleRate), over the
// origin's, capped at 1: one memory whose record stands out below its
// kind's sinks for every query, and a memory of ordinary luck (a few
// bad answers where most answers are bad) keeps 1. A measured impact
// that is negative (its 95% interval below 0) halves the factor; a
// positive one restores it to 1.
func (s *Scorer) Helpful(e engram.HelpEvidence) (factor, origin float64, effect *float64) {
	origin = 1
	if e.Origin.Good+e.Origin.Bad > 0 {
		rate, ref := originRate(e)
		origin = unit(math.Pow(rate/ref, s.policy.OriginPower))
	}
	kinds, _ := s.Features(e)
	h := e.Memory
	if h.Good+h.Bad <= 0 && h.With.N == 0 && h.Without.N == 0 {
		return origin * kinds, origin, nil
	}
	rate, _ := originRate(e)
	f := origin * kinds * unit(credibleRate(h, rate)/rate)
	x, lo, hi, ok := impact(h, impactMin)
	if !ok {
		return f, origin, nil
	}
	switch {
	case hi < 0:
		f /= 2
	case lo > 0:
		f = 1
	}
	return f, origin, &x
}

// impact is the difference of mean signals with and without a memory and
// its normal 95% interval; ok is false until both arms have least judged
// recalls.
func impact(h engram.Helpfulness, least int64) (effect, lo, hi float64, ok bool) {
	if h.With.N < least || h.Without.N < least {
		return 0, 0, 0, false
	}
	// The sample variance of the mean; with one recall, the largest a
	// signal in [-1, 1] can have.
	variance := func(o engram.Outcomes) float64 {
		if o.N < 2 {
			return 1
		}
		n, m := float64(o.N), o.Mean()
		return math.Max(o.Sq-n*m*m, 0) / (n - 1) / n
	}
	effect = h.With.Mean() - h.Without.Mean()
	se := math.Sqrt(variance(h.With) + variance(h.Without))
	return effect, effect - impactZ*se, effect + impactZ*se, true
}
