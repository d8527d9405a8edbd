package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestBenchLoCoMoHybrid: engram bench locomo with an embeddings endpoint
// configured embeds every stored turn before it asks the first question
// (the follower runs only in serve, so the bench waits for it), answers
// through hybrid recall and says which encoder made its figures.
func TestBenchLoCoMoHybrid(t *testing.T) {
	const data = `[{"sample_id": "conv-H", "conversation": {"speaker_a": "Ann", "speaker_b": "Bob",
  "session_1_date_time": "1:56 pm on 8 May, 2023",
  "session_1": [
   {"speaker": "Ann", "dia_id": "D1:1", "text": "I drink a double espresso every morning."},
   {"speaker": "Bob", "dia_id": "D1:2", "text": "My dentist moved to Tuesday."},
   {"speaker": "Ann", "dia_id": "D1:3", "text": "We ship the release on Friday."}]},
 "qa": [{"question": "What does Ann like to drink?", "evidence": ["D1:1"], "category": 4}]}]`
	path := filepath.Join(t.TempDir(), "locomo.json")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex // the endpoint answers on its own goroutines
		turns   int        // turn texts embedded
		atFirst = -1       // turns embedded when the first question was
	)
	fake := fakeEmbeddings(t, func(text string) bool {
		mu.Lock()
		defer mu.Unlock()
		if !strings.HasSuffix(text, "?") {
			turns++
		} else if atFirst < 0 {
			atFirst = turns
		}
		return strings.Contains(text, "espresso") || strings.Contains(text, "drink")
	})
	var stdout bytes.Buffer
	err := runBench(context.Background(), []string{"locomo", "--data", path, "--sessions", "--budget", "2000"},
		[]string{"ENGRAM_EMBEDDINGS_BASE_URL=" + fake.URL + "/v1", "ENGRAM_EMBEDDINGS_MODEL=fake"}, &stdout)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if turns < 3 || atFirst < 3 {
		t.Fatalf("%d turn texts embedded, %d of them before the first question (want all 3)", turns, atFirst)
	}
	if !strings.Contains(stdout.String(), `Hybrid recall: embeddings model "fake", weight 0.15`) || !strings.Contains(stdout.String(), "| **overall (1-4)** | 1 |") {
		t.Fatalf("report:\n%s", stdout.String())
	}
}
