package learning

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/engram-memory/engram"
)

// BenchmarkSupersede is the knowledge update of one recall of 50
// candidates of one origin, the worst case (every pair is compared):
// LoCoMo-like turns of about 25 words.
func BenchmarkSupersede(b *testing.B) {
	r := &Recaller{scorer: newTestScorer(b)}
	words := []string{"Caroline", "went", "to", "the", "support", "group", "yesterday", "and", "felt", "really",
		"inspired", "by", "stories", "Melanie", "painted", "a", "lake", "sunrise", "last", "year", "camping", "kids"}
	src := json.RawMessage(`{"kind":"bench","name":"locomo"}`)
	mems := make([]*engram.Memory, 50)
	for i := range mems {
		text := ""
		for j := 0; j < 25; j++ {
			text += words[(i*7+j*3)%len(words)] + " "
		}
		mems[i] = &engram.Memory{ID: fmt.Sprint("mem_", i), Category: engram.CategoryLife, Source: src,
			Content: text + fmt.Sprint(i), CreatedAt: time.Unix(int64(i), 0)}
	}
	cands := make([]Candidate, len(mems))
	b.ReportAllocs()
	for b.Loop() {
		for i, m := range mems {
			cands[i] = Candidate{Memory: m, Breakdown: engram.ScoreBreakdown{Score: 1, Superseded: 1}}
		}
		r.supersede(cands)
	}
}
