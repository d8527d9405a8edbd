// Package bench holds engram's measurement harnesses: recall quality on
// the LoCoMo conversations, recall latency on generated corpora, and
// router accuracy. They drive the same services the server uses, and
// report figures as tables for the README.
package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/engram-memory/engram"
)

// Services are the engram services a harness drives.
type Services struct {
	Auth     engram.AuthService
	Memories engram.MemoryService
	Recall   engram.RecallService
	// Measure, when set, answers the measured (not judged) recalls: the
	// same recall without exploration, so that a figure does not move
	// with a memory held back at random.
	Measure engram.RecallService
	// SeedExplore, when set, restarts the random source of Recall's
	// exploration (see learning.Recaller.SeedExplore): the learning
	// benchmark seeds it per run, so that a seed's figures repeat.
	SeedExplore func(seed uint64)
	Router      engram.RouterService
	Feedback    engram.FeedbackService
	Reflections engram.ReflectionService
	Sleep       engram.SleepService
	Sessions    engram.SessionService
	// Settle, when set, returns once the work the service does in the
	// background after a write has caught up (the embeddings of hybrid
	// recall): the LoCoMo benchmark calls it between storing a
	// conversation and asking about it, as a user would wait for the
	// vectors before measuring.
	Settle func(ctx context.Context) error
}

// tenantCtx creates a tenant and returns a context acting for it.
func tenantCtx(ctx context.Context, auth engram.AuthService, name string) (context.Context, error) {
	t, err := auth.EnsureTenant(ctx, name)
	if err != nil {
		return nil, err
	}
	return engram.NewContextWithTenant(ctx, t.ID), nil
}

// percentile is the nearest-rank percentile (p in 0..100) of values.
func percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	rank := int(math.Ceil(p * float64(len(s)) / 100))
	return s[min(max(rank, 1), len(s))-1]
}

func mean(values []float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	return sum / float64(len(values))
}

// table writes a Markdown table.
func table(w io.Writer, header []string, rows [][]string) {
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat("---|", len(header)))
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
}

func f3(x float64) string { return fmt.Sprintf("%.3f", x) }
