package learning

import (
	"testing"
	"time"

	"github.com/engram-memory/engram"
)

// TestEmotionWeight: of two memories equally relevant and equally old, the
// one said with feeling keeps more retention and scores higher, and its
// breakdown names the factor.
func TestEmotionWeight(t *testing.T) {
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	s := NewScorer(DefaultScoreConfig(), func() time.Time { return now })
	mem := func(e float64) *engram.Memory {
		return &engram.Memory{Priority: engram.P2, Stability: 30, Confidence: 0.5, Emotion: &e,
			CreatedAt: now.AddDate(0, 0, -30), ReinforcedAt: now.AddDate(0, 0, -30)}
	}
	calm, felt := s.Score(mem(0), 0.8), s.Score(mem(1), 0.8)
	if !(felt.Retention > calm.Retention) || !(felt.Score > calm.Score) {
		t.Fatalf("felt %+v\ncalm %+v", felt, calm)
	}
	if felt.Emotion != 1+engram.EmotionTieBreak || calm.Emotion != 1 {
		t.Fatalf("emotion factors %v %v", felt.Emotion, calm.Emotion)
	}
	if b := s.Score(&engram.Memory{Priority: engram.P2, Confidence: 0.5, CreatedAt: now}, 1); b.Emotion != 1 {
		t.Fatalf("a memory without emotion is neutral: %v", b.Emotion)
	}
}
