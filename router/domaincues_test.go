package router

import (
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// TestDomainEvidenceCountsAWordOnce: a cue that restates a lexicon entry
// found in the same query adds nothing; a cue for another word adds its
// weight.
func TestDomainEvidenceCountsAWordOnce(t *testing.T) {
	for _, tt := range []struct {
		query, domain string
		want          float64
	}{
		{"养猫", engram.CategoryLife, topicWeight},               // 猫 inside 养猫
		{"家里的猫", engram.CategoryLife, topicWeight + cueWeight}, // 家里, and 猫 on its own
		{"I feel anxious", engram.CategoryEmotion, 2 * aspectWeight},
		{"do I like it", engram.CategoryPreference, aspectWeight + formWeight},         // like once, and the form of a taste question
		{"how do I stay organized", engram.CategoryStrategy, aspectWeight + cueWeight}, // organize, and "how do i"
	} {
		got := domainEvidence(normalize(tt.query), analysis.Terms(tt.query))[tt.domain]
		if got != tt.want {
			t.Errorf("%q: %s evidence %v, want %v", tt.query, tt.domain, got, tt.want)
		}
	}
}

func TestAnchoredAndChoiceCues(t *testing.T) {
	r := New(DefaultConfig())
	for query, want := range map[string]engram.Intent{
		"周末带爸妈去哪玩好":                                    engram.IntentDecide, // a choice: 好 ends the query
		"我对咖啡豆有什么偏好":                                   engram.IntentAsk,    // 偏好 is a noun, not a choice
		"最近好多了":                                        engram.IntentAsk,
		"pasta or ramen tonight":                       engram.IntentDecide,
		"which fix worked better, retry or a lock":     engram.IntentAsk, // the past: a fact
		"what's the best way to prep for an interview": engram.IntentAsk,
	} {
		if got := r.Route("t1", query).Intent; got != want {
			t.Errorf("%q: intent %s, want %s", query, got, want)
		}
	}
	for query, want := range map[string]engram.Mode{
		"when's the quarterly review":           engram.ModeTemporal,
		"when the build is red, who gets paged": engram.ModeFactual,
		"what do I do when I'm tired":           engram.ModeFactual,
	} {
		if got := r.Route("t1", query).Mode; got != want {
			t.Errorf("%q: mode %s, want %s", query, got, want)
		}
	}
}

func TestDomainCues(t *testing.T) {
	r := New(DefaultConfig())
	for query, want := range map[string]string{
		"家里的猫最近老吐":                       engram.CategoryLife,    // 猫 inside 的猫 and 猫最
		"为什么我一到晚上就特别丧":                   engram.CategoryEmotion, // 丧
		"what's been weighing on me":     engram.CategoryEmotion,
		"how do I stay on top of things": engram.CategoryStrategy,
		"do I like it rare or medium":    engram.CategoryPreference,
		"how do I get to the dentist":    engram.CategoryLife,     // the topic outweighs the how-to form
		"我常用的是哪种学习法":                     engram.CategoryStrategy, // 法 as a suffix: a method
		"what mistakes do I keep making": engram.CategoryStrategy,
	} {
		if got := r.Route("t1", query).Domains[0].Name; got != want {
			t.Errorf("%q: domain %s, want %s", query, got, want)
		}
	}
}
