package engram_test

import (
	"testing"

	"github.com/engram-memory/engram"
)

// TestEstimateEmotion: neutral text is 0; affect words, intensifiers,
// exclamations and capitals raise it, in English and Chinese; it stays
// within 0–1.
func TestEstimateEmotion(t *testing.T) {
	for text, want := range map[string][2]float64{
		"The invoice is filed under project Kestrel":              {0, 0},
		"会议在三楼的会议室":                                               {0, 0},
		"I love my grandmother's garden":                          {0.3, 0.5},
		"I absolutely HATE flying, it terrifies me!":              {0.6, 1},
		"我爱我的猫":                                                   {0.3, 0.5},
		"我太害怕了！":                                                  {0.6, 1},
		"I love love love love this so much!!! AMAZING WONDERFUL": {1, 1},
	} {
		if got := engram.EstimateEmotion(text); got < want[0] || got > want[1] {
			t.Errorf("%q: %v, want %v–%v", text, got, want[0], want[1])
		}
	}
}

// TestEmotionStability: full emotion doubles the stability, none leaves it,
// and a memory that never decays still never does.
func TestEmotionStability(t *testing.T) {
	for _, c := range []struct{ s, e, want float64 }{{90, 0, 90}, {90, 1, 180}, {90, 0.5, 135}, {0, 1, 0}, {90, 3, 180}} {
		if got := engram.EmotionStability(c.s, c.e); got != c.want {
			t.Errorf("EmotionStability(%v, %v) = %v, want %v", c.s, c.e, got, c.want)
		}
	}
	if err := engram.CheckEmotion(new(1.5)); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("1.5: %v", err)
	}
}

// TestFirstEntity: the first capitalised word that does not open a
// sentence and is not a common capital or a skipped name.
func TestFirstEntity(t *testing.T) {
	for text, want := range map[string]string{
		"We adopted a grey cat and named her Dumpling":  "Dumpling",
		"Dumpling ate. Then Caroline's friend Mel came": "Mel",
		"I went there on Monday with Melanie":           "",
		"What a lovely name, Caroline":                  "",
		"我们收养了一只叫团子的猫":                                  "",
		"the NASA trip was with Jon":                    "Jon",
	} {
		if got := engram.FirstEntity(text, "Caroline", "Melanie"); got != want {
			t.Errorf("FirstEntity(%q) = %q, want %q", text, got, want)
		}
	}
}
