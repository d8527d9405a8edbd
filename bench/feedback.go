package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"

	"github.com/engram-memory/engram"
)

// FeedbackOptions tunes the learning-effect run.
type FeedbackOptions struct {
	Path string
	// Budget of the recalls that feedback judges: what a chat product
	// would inject (a dozen LoCoMo turns), not the whole ranking.
	FeedbackBudget int
	// EvalBudget of the measured recalls, as in RunLoCoMo.
	EvalBudget int
	// Poison is the share of thumbs a single hostile rater flips.
	Poison float64
	Seed   uint64
}

// FeedbackReport holds recall before and after feedback on the held-out
// half of the questions.
type FeedbackReport struct {
	Before, After *LoCoMoReport
	Thumbs        int
	Up, Flipped   int
}

// RunLoCoMoFeedback measures the learning effect of feedback. In every
// conversation the questions alternate between a training and a held-out
// half. The held-out half is asked first (before). Then every training
// question is asked as a recall of FeedbackBudget tokens and judged as a
// user would: thumb up when the injected context holds an evidence turn,
// down otherwise, each thumb from its own rater; with Poison > 0 that
// share of the thumbs is flipped and sent by one hostile rater. Then the
// held-out half is asked again (after). The held-out half is measured
// with Services.Measure when set (no exploration), and the judged
// recalls' exploration is seeded by Seed (Services.SeedExplore), so that
// a run's figures repeat.
func RunLoCoMoFeedback(ctx context.Context, svc Services, opt FeedbackOptions, prefix string) (*FeedbackReport, error) {
	convs, err := loadLoCoMo(opt.Path)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(opt.Seed, opt.Seed+1))
	if svc.SeedExplore != nil {
		svc.SeedExplore(opt.Seed)
	}
	measure := svc
	if svc.Measure != nil {
		measure.Recall = svc.Measure
	}
	rep := &FeedbackReport{Before: newReport(), After: newReport()}
	for _, conv := range convs {
		tctx, byMemory, err := rep.Before.ingest(ctx, svc, conv, prefix)
		if err != nil {
			return nil, err
		}
		var train, test []locomoQuestion
		for i, q := range rep.Before.questions(conv, byMemory) {
			if i%2 == 0 {
				train = append(train, q)
			} else {
				test = append(test, q)
			}
		}
		for _, q := range test {
			ranked, _, ms, err := rank(tctx, measure, q.text, opt.EvalBudget, byMemory)
			if err != nil {
				return nil, err
			}
			rep.Before.record(q, ranked, ms)
		}
		for i, q := range train {
			_, rec, _, err := ask(tctx, svc, q.text, opt.FeedbackBudget, byMemory)
			if err != nil {
				return nil, err
			}
			if len(rec.Items) == 0 {
				continue
			}
			up := false
			for _, it := range rec.Items {
				up = up || q.gold[byMemory[it.ID]]
			}
			rater := conv.SampleID + "-user-" + strconv.Itoa(i)
			if opt.Poison > 0 && rng.Float64() < opt.Poison {
				up, rater = !up, "hostile"
				rep.Flipped++
			}
			thumb := engram.ThumbDown
			if up {
				thumb = engram.ThumbUp
				rep.Up++
			}
			if _, err := svc.Feedback.SubmitFeedback(tctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: thumb, Rater: rater}); err != nil {
				return nil, fmt.Errorf("feedback: %w", err)
			}
			rep.Thumbs++
		}
		for _, q := range test {
			ranked, _, ms, err := rank(tctx, measure, q.text, opt.EvalBudget, byMemory)
			if err != nil {
				return nil, err
			}
			rep.After.record(q, ranked, ms)
		}
	}
	rep.Before.finish()
	rep.After.finish()
	return rep, nil
}

// PrintFeedback writes the clean and the poisoned runs side by side.
func PrintFeedback(w io.Writer, clean, poisoned *FeedbackReport, poison float64) {
	fmt.Fprintf(w, "Held-out questions: %d. Clean run: %d thumbs (%d up). Poisoned run: %d thumbs, %d flipped by one hostile rater (%.0f%%).\n\n",
		clean.After.Questions, clean.Thumbs, clean.Up, poisoned.Thumbs, poisoned.Flipped, 100*poison)
	header := []string{"category", "n", "R@10 before", "R@10 after", "lift", "R@10 after (poisoned)", "lift (poisoned)", "lift kept"}
	row := func(name string, b, a, p *LoCoMoResult) []string {
		lift, plift := a.Recall[10]-b.Recall[10], p.Recall[10]-b.Recall[10]
		kept := "—"
		if lift >= 0.0005 { // a lift that rounds to +0.000 keeps no meaningful share
			kept = fmt.Sprintf("%.0f%%", 100*plift/lift)
		}
		return []string{name, strconv.Itoa(b.N), f3(b.Recall[10]), f3(a.Recall[10]), fmt.Sprintf("%+.3f", lift),
			f3(p.Recall[10]), fmt.Sprintf("%+.3f", plift), kept}
	}
	rows := [][]string{row("**overall (1-4)**", clean.Before.Overall, clean.After.Overall, poisoned.After.Overall)}
	for _, c := range []int{1, 2, 3, 4} {
		if b := clean.Before.ByCategory[c]; b != nil {
			rows = append(rows, row(fmt.Sprintf("%d %s", c, categoryNames[c]), b, clean.After.ByCategory[c], poisoned.After.ByCategory[c]))
		}
	}
	table(w, header, rows)
}
