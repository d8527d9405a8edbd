package engram

import (
	"math"
	"time"
)

// Retention is the Ebbinghaus retention e^(−t/S) of a memory t = ageDays
// after its last reinforcement, with stability S = stability days, before
// any floor: the one formula behind the recall score's retention and the
// sleep cycle's archiving, so the two never disagree about what decayed.
// A stability ≤ 0 (or NaN) never decays: 1. An age ≤ 0 is 1.
func Retention(ageDays, stability float64) float64 {
	if !(stability > 0) || !(ageDays > 0) {
		return 1
	}
	return math.Exp(-ageDays / stability)
}

// AgeDays is t of Retention: the days from m's last reinforcement
// (ReinforcedAt: created, its content edited, or approved by feedback;
// reads and down votes do not count) to now. A memory that carries no such
// time (built by hand) is aged from its creation; a time in the future
// (clock skew between writers) counts as now.
func (m *Memory) AgeDays(now time.Time) float64 {
	last := m.ReinforcedAt
	if last.IsZero() {
		last = m.CreatedAt
	}
	return max(now.Sub(last).Hours()/24, 0)
}
