package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/learning"
)

// TestLearningSeeds: every seed runs clean, poisoned and plain, each on
// its own tenants, and progress says so.
func TestLearningSeeds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locomo.json")
	if err := os.WriteFile(path, []byte(locomoSample), 0o600); err != nil {
		t.Fatal(err)
	}
	svc, db := services(t)
	svc.Feedback = learning.NewFeedback(db, learning.NewScorer(learning.DefaultScoreConfig(), time.Now), engram.DefaultFeedbackConfig())
	mix, err := ParseMix(DefaultMix)
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	seeds, err := RunLearningSeeds(context.Background(), svc, LearningOptions{Path: path, Mix: mix, FeedbackBudget: 400, EvalBudget: 4000},
		[]int{1, 2}, 0.2, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if len(seeds) != 2 || seeds[1].Seed != 2 || seeds[1].Clean == nil || seeds[1].Poisoned == nil || seeds[1].Plain == nil ||
		seeds[1].Poisoned.Poison != 0.2 || seeds[1].Clean.Poison != 0 || len(seeds[1].Plain.Misleading) != 0 {
		t.Fatalf("seeds: %+v", seeds)
	}
	if got := strings.Count(progress.String(), " done\n"); got != 6 || !strings.Contains(progress.String(), "seed 2 plain done") {
		t.Fatalf("progress:\n%s", progress.String())
	}
}
