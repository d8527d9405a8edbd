package learning

import (
	"testing"

	"github.com/engram-memory/engram"
)

// TestNamesSpeaker: a speaker is named as a whole word in spaced scripts
// (any case, possessive too), anywhere in Chinese or Japanese text.
func TestNamesSpeaker(t *testing.T) {
	for _, tc := range []struct {
		query, who string
		want       bool
	}{
		{"What did Caroline research?", "Caroline", true},
		{"what are caroline's hobbies", "Caroline", true},
		{"Where did Jonathan go?", "Jon", false},
		{"Jon's dance studio; Jonathan", "Jon", true},
		{"Did Annabel call?", "Ann", false},
		{"小明喜欢什么运动？", "小明", true},
		{"小红喜欢什么运动？", "小明", false},
		{"What does 小明 like?", "小明", true},
		{"", "Caroline", false},
		{"What did Caroline say?", "", false},
	} {
		if got := names(tc.query, tc.who); got != tc.want {
			t.Errorf("names(%q, %q) = %v, want %v", tc.query, tc.who, got, tc.want)
		}
	}
}

// TestReadSpeakers: only memories that open with their speaker tag have
// a speaker; a query naming one of two speakers damps the other's, a
// query naming both or none damps nothing, and pinned memories and
// memories without a speaker are left alone.
func TestReadSpeakers(t *testing.T) {
	cand := func(id, content string, pinned bool, tags ...string) Candidate {
		return Candidate{Memory: &engram.Memory{ID: id, Content: content, Tags: tags},
			Breakdown: engram.ScoreBreakdown{Score: 0.5, Pinned: pinned}}
	}
	fresh := func() []Candidate {
		return []Candidate{
			cand("a", "Caroline: I took a pottery class", false, "Caroline"),
			cand("b", "Melanie: Caroline, take the class!", false, "Melanie"),
			cand("c", "Melanie: I love painting", true, "Melanie"),
			cand("d", "Pottery classes start in May", false, "Melanie"),
		}
	}
	if s := speakerOf(fresh()[3].Memory); s != "" {
		t.Fatalf("a memory that does not open with its tag has no speaker: %q", s)
	}
	cs := fresh()
	named := namedSpeakers("What class did Caroline take?", cs)
	readSpeakers(cs, named)
	for i, want := range []float64{0.5, 0.5 * speakerDamping, 0.5, 0.5} {
		if cs[i].Breakdown.Score != want {
			t.Errorf("candidate %s: score %v, want %v", cs[i].Memory.ID, cs[i].Breakdown.Score, want)
		}
	}
	if cs[1].Breakdown.Speaker != speakerDamping {
		t.Errorf("the damped candidate's breakdown: %+v", cs[1].Breakdown)
	}
	readSpeakers(cs, named)
	if cs[1].Breakdown.Score != 0.5*speakerDamping {
		t.Errorf("a second read must not damp again: %v", cs[1].Breakdown.Score)
	}
	for _, q := range []string{"What did Caroline and Melanie paint?", "Who paints?"} {
		if named := namedSpeakers(q, fresh()); named != nil {
			t.Errorf("%q names both speakers or none: %v", q, named)
		}
	}
}
