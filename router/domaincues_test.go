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
		{"do I like it", engram.CategoryPreference, aspectWeight},
		{"how do I stay organized", engram.CategoryStrategy, aspectWeight + cueWeight}, // organize, and "how do i"
	} {
		got := domainEvidence(normalize(tt.query), analysis.Terms(tt.query))[tt.domain]
		if got != tt.want {
			t.Errorf("%q: %s evidence %v, want %v", tt.query, tt.domain, got, tt.want)
		}
	}
}
