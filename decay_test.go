package engram_test

import (
	"math"
	"testing"
	"time"

	"github.com/engram-memory/engram"
)

func TestRetention(t *testing.T) {
	for _, tt := range []struct{ age, s, want float64 }{
		{0, 14, 1}, {14, 14, 1 / math.E}, {-3, 14, 1}, {100, 0, 1}, {100, math.NaN(), 1}, {14 * math.Log(50), 14, 0.02},
	} {
		if got := engram.Retention(tt.age, tt.s); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Retention(%v, %v) = %v, want %v", tt.age, tt.s, got, tt.want)
		}
	}
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	m := &engram.Memory{CreatedAt: now.AddDate(0, 0, -10)}
	if got := m.AgeDays(now); got != 10 {
		t.Errorf("aged from creation: %v", got)
	}
	m.ReinforcedAt = now.AddDate(0, 0, -2)
	if got := m.AgeDays(now); got != 2 {
		t.Errorf("aged from reinforcement: %v", got)
	}
	m.ReinforcedAt = now.Add(time.Hour)
	if got := m.AgeDays(now); got != 0 {
		t.Errorf("a reinforcement in the future: %v", got)
	}
}
