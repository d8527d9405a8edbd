package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestUnanswerableFrozen: the questions no LoCoMo conversation answers
// were written before the relevance cut was tuned and must not change
// since, or the tokens they inject stop being a held-out figure.
func TestUnanswerableFrozen(t *testing.T) {
	raw, err := locomoData.ReadFile("data/locomo/unanswerable.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	if got := hex.EncodeToString(sum[:]); got != "e473e5fc5b7767ca87197e0324e062353d4e05cdcaf0cd803764b2d841a57d2a" {
		t.Fatalf("data/locomo/unanswerable.jsonl changed: sha256 %s", got)
	}
	qs, err := unanswerable()
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, q := range qs {
		per[q.SampleID]++
	}
	if len(per) != 10 {
		t.Fatalf("conversations: %v", per)
	}
	for id, n := range per {
		if n < 10 {
			t.Fatalf("%s has %d questions, want at least 10", id, n)
		}
	}
}
