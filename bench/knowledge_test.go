package bench

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
)

// TestKnowledgeHarness: a small run writes every fact and the quarter's
// changes, asks each figure's questions and prints one row per recall;
// a seed repeats its figures, and a bad entity count is refused.
func TestKnowledgeHarness(t *testing.T) {
	ctx := context.Background()
	opt := KnowledgeOptions{Entities: 80, Queries: 10, Seed: 1, Budget: 4000}
	var first []*KnowledgeResult
	for range 2 {
		svc, _ := services(t)
		rs, err := RunKnowledge(ctx, svc, opt, []engram.RecallService{svc.Recall}, []string{"default"}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		r := rs[0]
		if r.nUpdated != 10 || r.nKept != 10 || r.nName != 10 {
			t.Fatalf("questions asked: %+v", r)
		}
		if r.Updated < 0.9 || r.Kept < 0.9 || r.NameAll < 0.9 {
			t.Errorf("figures on a small tenant: %+v", r)
		}
		if first != nil && *first[0] != *r {
			t.Errorf("seed 1 twice: %+v then %+v", first[0], r)
		}
		first = rs
	}
	var out bytes.Buffer
	PrintKnowledge(&out, opt, first)
	if !strings.Contains(out.String(), "| default |") || !strings.Contains(out.String(), "80 people") {
		t.Errorf("table:\n%s", out.String())
	}
	svc, _ := services(t)
	if _, err := RunKnowledge(ctx, svc, KnowledgeOptions{Entities: 0, Seed: 1}, nil, nil, io.Discard); err == nil {
		t.Error("0 entities accepted")
	}
}
