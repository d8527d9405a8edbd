package engram

import (
	"math"
	"slices"
	"strings"
	"unicode"
)

// Emotional weight (seed 003): a memory said with feeling — "I hate
// flying!", "我太害怕了" — is kept longer and, between two memories that
// answer a query equally well, comes first. Emotion is its intensity in
// [0, 1]; a write may give it, else EstimateEmotion reads it from the text
// by rules, in English and Chinese, with no model.

// EmotionRetentionGain is how much a full emotion (1) stretches a memory's
// Ebbinghaus stability: S × (1 + gain × emotion), so it fades half as fast.
const EmotionRetentionGain = 1.0

// EmotionTieBreak is how much more an equally relevant memory of full
// emotion scores than a neutral one: its score × (1 + EmotionTieBreak ×
// emotion) (ScoreBreakdown.Emotion). Neutral memories score as before.
const EmotionTieBreak = 0.05

// EmotionStability is the stability in effect for a memory of stability s
// and emotion e (clamped to [0, 1]): s × (1 + EmotionRetentionGain × e).
// A stability ≤ 0 (never decays) stays as it is.
func EmotionStability(s, e float64) float64 {
	if !(s > 0) || !(e > 0) {
		return s
	}
	return s * (1 + EmotionRetentionGain*min(e, 1))
}

// EmotionOf is m's emotion, 0 when it has none yet.
func EmotionOf(m *Memory) float64 {
	if m == nil || m.Emotion == nil {
		return 0
	}
	return *m.Emotion
}

// CheckEmotion reports an emotion outside [0, 1] (or NaN) as EINVALID.
func CheckEmotion(e *float64) error {
	if e != nil && !(*e >= 0 && *e <= 1) {
		return Errorf(EINVALID, "emotion must be between 0 and 1")
	}
	return nil
}

// The estimator's weights: each affect word adds emotionAffect, each
// intensifier, exclamation run or shouted word emotionMark; the sum is
// capped at 1 and rounded to two decimals.
const (
	emotionAffect = 0.35
	emotionMark   = 0.15
)

// affectWords are English words (matched as whole lower-case words or
// their stem at a word's start) that name a strong feeling.
var affectWords = []string{
	"love", "loved", "loving", "adore", "hate", "hated", "hating", "detest", "afraid", "scared", "terrified",
	"fear", "frightened", "panic", "angry", "furious", "mad", "upset", "devastated", "heartbroken",
	"grief", "grieving", "cried", "crying", "tears", "thrilled", "excited", "ecstatic", "overjoyed",
	"delighted", "proud", "ashamed", "embarrassed", "anxious", "worried", "nervous", "depressed",
	"miserable", "lonely", "hurt", "disgusted", "horrified", "shocked", "amazing", "awful", "terrible",
	"horrible", "wonderful", "passionate", "passion", "obsessed", "dread", "stressed", "stress",
}

// intensifiers are English words that strengthen what follows.
var intensifiers = []string{
	"very", "so", "really", "extremely", "incredibly", "absolutely", "totally", "deeply", "truly",
	"super", "completely", "utterly",
}

// zhAffect are Chinese words of strong feeling; zhIntensifiers strengthen
// them. 太…了 ("too …") counts as an intensifier once per pair.
var (
	zhAffect = []string{
		"爱", "恨", "害怕", "怕", "恐惧", "生气", "愤怒", "气死", "伤心", "难过", "痛苦", "哭", "开心", "高兴",
		"激动", "兴奋", "讨厌", "喜欢", "担心", "焦虑", "紧张", "崩溃", "绝望", "幸福", "感动", "骄傲", "丢脸",
		"孤独", "委屈", "烦", "惊喜", "可怕", "糟糕", "恶心",
	}
	zhIntensifiers = []string{"非常", "特别", "超级", "真的", "十分", "极其", "太", "最", "绝对"}
)

// EstimateEmotion estimates the emotional intensity of text in [0, 1] by
// rules: affect words ("love", "terrified", 爱, 害怕), intensifiers
// ("really", 非常, 太…了), exclamation marks (! and ！, one per run) and
// words in capitals ("NEVER"). Neutral text is 0.
func EstimateEmotion(text string) float64 {
	score := 0.0
	lower := strings.ToLower(text)
	for _, w := range strings.FieldsFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		switch {
		case slices.Contains(affectWords, w):
			score += emotionAffect
		case slices.Contains(intensifiers, w):
			score += emotionMark
		}
	}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len([]rune(w)) >= 3 && w == strings.ToUpper(w) && strings.ToLower(w) != w {
			score += emotionMark
		}
	}
	score += zhScore(text)
	prev := false
	for _, r := range text {
		bang := r == '!' || r == '！'
		if bang && !prev {
			score += emotionMark
		}
		prev = bang
	}
	return math.Round(min(score, 1)*100) / 100
}

// zhScore is the Chinese part of EstimateEmotion: each affect word once
// per occurrence (a longer word first, so 害怕 is not also 怕), each
// intensifier, and 太…了.
func zhScore(text string) float64 {
	score := 0.0
	rest := text
	for _, w := range zhAffect {
		if n := strings.Count(rest, w); n > 0 {
			score += emotionAffect * float64(n)
			rest = strings.ReplaceAll(rest, w, " ")
		}
	}
	for _, w := range zhIntensifiers {
		score += emotionMark * float64(strings.Count(rest, w))
	}
	if i := strings.Index(text, "太"); i >= 0 && strings.Contains(text[i:], "了") {
		score += emotionMark
	}
	return score
}
