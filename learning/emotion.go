package learning

import "github.com/engram-memory/engram"

// emotionWeight multiplies b's score by the factor m's emotional weight
// gives it (engram.ScoreBreakdown.Emotion), the score staying within
// [0, 1]: between memories that answer a query equally well the one said
// with more feeling comes first. Its
// effect on retention is in the stability Score passes to retention
// (engram.EmotionStability).
func emotionWeight(m *engram.Memory, b *engram.ScoreBreakdown) {
	b.Emotion = 1 + engram.EmotionTieBreak*min(max(engram.EmotionOf(m), 0), 1)
	b.Score = unit(b.Score * b.Emotion)
}
