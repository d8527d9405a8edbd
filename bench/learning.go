package bench

// The learning benchmark (engram bench learning): can thumbs on some
// questions teach recall to stop injecting misleading memories for
// questions nobody rated?
//
// Seeds. Seeds 1 and 11 to 19 are the tuning seeds: every constant of the
// feedback policy (helpfulness, rater reputation, exploration) was chosen
// by looking at them only (seed 1 alone until the policy of origins;
// 11 and 12 were added when seed 1 proved kinder than the others, 13 to
// 19 when policies that differ little proved to move one seed's recovery
// by up to 0.2, more than three seeds can average out). Seeds
// 2, 3, 4 and 5 are reported seeds: their figures were recorded once on
// the code before the policy changed (the first score) and are read again
// only to report, never to tune. Seeds 6, 7, 8 and 9 were set aside, never
// run, when 11 and 12 were added, and first run to report the policy tuned
// on 1, 11 and 12. Seeds 21 to 26 were set aside on 2026-11-25 before
// the next round of tuning, when 2–9 had been read often enough that a
// choice could have leaned on them: never run until that round had
// committed a policy (4ccb517), run to report it, and once more to report
// the round's last policy (20e07db). Seeds 31 to 40 were set aside on
// 2026-11-26, before the round that works on the plain-LoCoMo lift, for
// the same reason (2–9 and 21–26 had each been read two or three times):
// never run until that round committed its policy (6ab78a4), run to
// report it, and once more to report the round's last policy (687cd94,
// chosen on the tuning seeds after the first policy was found to cost
// the --same-origin recovery; 2–9 and 21–26 were read on both too, and
// --same-origin on 2–5). A seed fixes the
// train/held-out split, the misleading memories, the hostile rater's
// flips and, through Services.SeedExplore, the memories exploration holds
// back, so that a seed's figures repeat exactly.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/engram-memory/engram"
)

// Kinds of misleading memory the generator writes.
const (
	// KindStuffed is a keyword-stuffed note naming the topics of several
	// questions and holding no fact.
	KindStuffed = "stuffed"
	// KindStale is an older version of an evidence turn with one detail
	// different, written before the conversation (superseded by it).
	KindStale = "stale"
	// KindNearDup is a near-duplicate of an evidence turn with one detail
	// changed, written after the conversation.
	KindNearDup = "neardup"
	// KindChatter is off-topic small talk in a speaker's voice that names
	// the topic words of questions in passing and answers none.
	KindChatter = "chatter"
	// KindPlausible looks like an ordinary good memory: a real turn of the
	// conversation that is no question's evidence, in its speaker's voice,
	// with a sentence naming a held-out question's topic words and a
	// detail of the conversation that answers nothing.
	KindPlausible = "plausible"
)

// LearningKinds lists the kinds in report order.
var LearningKinds = []string{KindStuffed, KindStale, KindNearDup, KindChatter, KindPlausible}

// Mix says how many misleading memories of each kind the generator
// writes per conversation, as a share of the conversation's questions.
type Mix map[string]float64

// DefaultMix is the mix of the reported runs.
const DefaultMix = "stuffed=0.15,stale=0.15,neardup=0.15,chatter=0.1,plausible=0.1"

// ParseMix reads "kind=share,…"; an empty string is no misleading
// memories (plain LoCoMo).
func ParseMix(s string) (Mix, error) {
	mix := Mix{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		share, err := strconv.ParseFloat(v, 64)
		switch {
		case !ok || err != nil || share < 0 || share > 5:
			return nil, fmt.Errorf("bench learning: mix %q: want kind=share with share in [0, 5]", part)
		case !slices.Contains(LearningKinds, k):
			return nil, fmt.Errorf("bench learning: unknown kind %q; want %s", k, strings.Join(LearningKinds, ", "))
		}
		mix[k] = share
	}
	return mix, nil
}

// LearningOptions tunes engram bench learning.
type LearningOptions struct {
	Path string
	Mix  Mix
	// FeedbackBudget is the budget of the judged (training) recalls: what a
	// chat product would inject.
	FeedbackBudget int
	// EvalBudget is the budget of the measured recalls (large, so that
	// ranking is measured, not packing).
	EvalBudget int
	// Poison is the share of thumbs one hostile rater flips.
	Poison float64
	// Rounds is how often each training question is asked and judged.
	Rounds int
	// Conversations limits the run to the first n conversations (0: all).
	Conversations int
	Seed          uint64
	// Prefix names the run's tenants.
	Prefix string
	// SameOrigin writes the misleading memories as the conversation's
	// turns are written (same source and type), so that nothing but
	// their own feedback tells them apart (see engram.Memory.Origin).
	SameOrigin bool
	// Trace, when set, receives one JSON line per measured and per judged
	// recall (see LearningTrace), for studying a credit policy offline.
	Trace io.Writer
}

// LearningQuestion is one held-out question's outcome.
type LearningQuestion struct {
	Category int
	// Kind is the kind of the best-ranked misleading memory in the
	// question's top 10 before feedback, "" when none was there.
	Kind string
	// Unjudged is set when none of the misleading memories in the
	// question's top 10 before feedback was in any judged recall: what
	// sinks them is what was learned of their kind, not of them.
	Unjudged               bool
	Before, Ceiling, After float64 // recall@10
}

// LearningRun is one run: one seed, one mix, clean or poisoned.
type LearningRun struct {
	Seed       uint64
	Poison     float64
	Held       []LearningQuestion
	Misleading map[string]int // kind → memories written
	Thumbs     int
	Up         int
	Flipped    int
}

// Recovery sums the held-out questions that keep returns true for:
// before, ceiling and after recall@10 (means), and the recovery
// (after − before) / (ceiling − before), NaN when the ceiling is no
// higher than before.
func (r *LearningRun) Recovery(keep func(LearningQuestion) bool) (n int, before, ceiling, after, recovery float64) {
	for _, q := range r.Held {
		if keep(q) {
			n++
			before += q.Before
			ceiling += q.Ceiling
			after += q.After
		}
	}
	if n == 0 {
		return 0, math.NaN(), math.NaN(), math.NaN(), math.NaN()
	}
	recovery = math.NaN()
	if ceiling-before > 1e-9 {
		recovery = (after - before) / (ceiling - before)
	}
	return n, before / float64(n), ceiling / float64(n), after / float64(n), recovery
}

// misleadingLabel starts the label of a misleading memory (turns are
// labelled with their dia_id).
const misleadingLabel = "~"

// RunLearning runs the benchmark once. Per conversation (one tenant): the
// turns are stored as RunLoCoMo stores them, with the generated misleading
// memories (stale ones before the turns, the others after); the questions
// are split at random into a training and a held-out half; every held-out
// question is asked (before; the ceiling is the same ranking with the
// misleading memories struck out); every training question is asked at
// FeedbackBudget tokens and thumbed up when an injected memory is one of
// its evidence turns, down otherwise, each thumb by its own rater (with
// Poison > 0 that share of thumbs is flipped and sent by one hostile
// rater); then the held-out half is asked again (after).
func RunLearning(ctx context.Context, svc Services, opt LearningOptions) (*LearningRun, error) {
	convs, err := loadLoCoMo(opt.Path)
	if err != nil {
		return nil, err
	}
	if opt.Conversations > 0 && opt.Conversations < len(convs) {
		convs = convs[:opt.Conversations]
	}
	rounds := max(opt.Rounds, 1)
	// The hostile rater draws from its own source, so that a seed writes
	// the same misleading memories and split clean and poisoned.
	if svc.SeedExplore != nil {
		svc.SeedExplore(opt.Seed)
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x6c6561726e))
	hostile := rand.New(rand.NewPCG(opt.Seed, 0x686f7374696c65))
	run := &LearningRun{Seed: opt.Seed, Poison: opt.Poison, Misleading: map[string]int{}}
	for _, conv := range convs {
		tctx, err := tenantCtx(ctx, svc.Auth, opt.Prefix+strings.ToLower(conv.SampleID))
		if err != nil {
			return nil, err
		}
		turns, dia, err := turnMemories(tctx, svc, conv, false)
		if err != nil {
			return nil, err
		}
		known := make(map[string]string, len(dia))
		for _, d := range dia {
			known[d] = d
		}
		rep := newReport()
		qs := rep.questions(conv, known)
		rng.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
		train, held := qs[:len(qs)/2], qs[len(qs)/2:]
		fakes, err := misleading(tctx, svc, rng, opt.Mix, turns, dia, train, held)
		if err != nil {
			return nil, err
		}
		if opt.SameOrigin {
			for _, f := range fakes {
				f.m.Source, f.m.Type = locomoSource, "dialog_turn"
			}
		}
		var batch []*engram.Memory
		var labels []string
		for _, f := range fakes {
			if f.kind == KindStale {
				batch, labels = append(batch, f.m), append(labels, misleadingLabel+f.kind)
			}
		}
		batch, labels = append(batch, turns...), append(labels, dia...)
		for _, f := range fakes {
			if f.kind != KindStale {
				batch, labels = append(batch, f.m), append(labels, misleadingLabel+f.kind)
			}
			run.Misleading[f.kind]++
		}
		byMemory, err := storeMemories(tctx, svc, batch, labels)
		if err != nil {
			return nil, fmt.Errorf("bench learning %s: %w", conv.SampleID, err)
		}
		measure := svc
		if svc.Measure != nil {
			measure.Recall = svc.Measure
		}
		var trace *tracer
		if opt.Trace != nil {
			for id, l := range byMemory {
				if strings.HasPrefix(l, misleadingLabel) {
					byMemory[id] = l + ":" + id
				}
			}
			trace = &tracer{enc: json.NewEncoder(opt.Trace), run: opt.Prefix, byMemory: byMemory, kinds: make(map[string]memoryKinds, len(byMemory))}
			for id := range byMemory {
				m, err := svc.Memories.FindMemoryByID(tctx, id)
				if err != nil {
					return nil, err
				}
				trace.kinds[id] = memoryKinds{origin: m.Origin(), features: m.Features()}
			}
		}
		start := len(run.Held)
		var misled [][]string // misleading memories in each held-out question's top 10, before
		for i, q := range held {
			ranked, rec, _, err := rank(tctx, measure, q.text, opt.EvalBudget, byMemory)
			if err != nil {
				return nil, err
			}
			if err := trace.write(conv.SampleID, "before", i, q, rec, nil, ""); err != nil {
				return nil, err
			}
			lq := LearningQuestion{Category: q.category, Before: recallAt10(ranked, q.gold)}
			var struck []string
			for i, l := range ranked {
				if !strings.HasPrefix(l, misleadingLabel) {
					struck = append(struck, l)
				} else if lq.Kind == "" && i < 10 {
					lq.Kind, _, _ = strings.Cut(strings.TrimPrefix(l, misleadingLabel), ":")
				}
			}
			lq.Ceiling = recallAt10(struck, q.gold)
			run.Held = append(run.Held, lq)
			var mis []string
			for _, it := range rec.Items[:min(10, len(rec.Items))] {
				if strings.HasPrefix(byMemory[it.ID], misleadingLabel) {
					mis = append(mis, it.ID)
				}
			}
			misled = append(misled, mis)
		}
		judged := map[string]bool{}
		for r := range rounds {
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
					judged[it.ID] = true
					up = up || q.gold[byMemory[it.ID]]
				}
				rater := fmt.Sprintf("%s-user-%d-%d", conv.SampleID, r, i)
				if opt.Poison > 0 && hostile.Float64() < opt.Poison {
					up, rater = !up, "hostile"
					run.Flipped++
				}
				thumb := engram.ThumbDown
				if up {
					thumb = engram.ThumbUp
					run.Up++
				}
				if _, err := svc.Feedback.SubmitFeedback(tctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: thumb, Rater: rater}); err != nil {
					return nil, fmt.Errorf("feedback: %w", err)
				}
				if err := trace.write(conv.SampleID, "train", i, q, rec, &up, rater); err != nil {
					return nil, err
				}
				run.Thumbs++
			}
		}
		for i, q := range held {
			ranked, rec, _, err := rank(tctx, measure, q.text, opt.EvalBudget, byMemory)
			if err != nil {
				return nil, err
			}
			if err := trace.write(conv.SampleID, "after", i, q, rec, nil, ""); err != nil {
				return nil, err
			}
			run.Held[start+i].After = recallAt10(ranked, q.gold)
			run.Held[start+i].Unjudged = !slices.ContainsFunc(misled[i], func(id string) bool { return judged[id] })
		}
	}
	return run, nil
}

func recallAt10(ranked []string, gold map[string]bool) float64 {
	found := 0
	for _, l := range ranked[:min(10, len(ranked))] {
		if gold[l] {
			found++
		}
	}
	return float64(found) / float64(len(gold))
}

// LearningSeed is one seed's clean, poisoned and plain runs.
type LearningSeed struct {
	Seed                   uint64
	Clean, Poisoned, Plain *LearningRun
}

func all(LearningQuestion) bool { return true }

// PrintLearning writes one table per seed and a summary over the seeds.
func PrintLearning(w io.Writer, seeds []LearningSeed, mix string) {
	fmt.Fprintf(w, "Misleading mix %s. Recall@10 of the held-out questions; recovery = (after − before) / (ceiling − before).\n\n", mix)
	rec := func(x float64) string {
		if math.IsNaN(x) {
			return "—"
		}
		return fmt.Sprintf("%.2f", x)
	}
	for _, s := range seeds {
		fmt.Fprintf(w, "Seed %d: misleading %v; clean %d thumbs (%d up); poisoned %d thumbs, %d flipped by one rater.\n\n",
			s.Seed, s.Clean.Misleading, s.Clean.Thumbs, s.Clean.Up, s.Poisoned.Thumbs, s.Poisoned.Flipped)
		header := []string{"questions", "n", "before", "ceiling", "after", "recovery", "after (poisoned)", "recovery (poisoned)"}
		var rows [][]string
		row := func(name string, keep func(LearningQuestion) bool) {
			n, b, c, a, r := s.Clean.Recovery(keep)
			if n == 0 {
				return
			}
			_, _, _, pa, pr := s.Poisoned.Recovery(keep)
			rows = append(rows, []string{name, strconv.Itoa(n), f3(b), f3(c), f3(a), rec(r), f3(pa), rec(pr)})
		}
		row("**all held-out**", all)
		for _, k := range LearningKinds {
			row("misled by "+k, func(q LearningQuestion) bool { return q.Kind == k })
		}
		row("misled, never judged", func(q LearningQuestion) bool { return q.Kind != "" && q.Unjudged })
		row("not misled", func(q LearningQuestion) bool { return q.Kind == "" })
		for _, c := range []int{1, 2, 3, 4} {
			row(fmt.Sprintf("%d %s", c, categoryNames[c]), func(q LearningQuestion) bool { return q.Category == c })
		}
		table(w, header, rows)
		_, pb, _, pa, _ := s.Plain.Recovery(all)
		fmt.Fprintf(w, "\nPlain LoCoMo (no misleading memories), same split: before %.3f, after %.3f, lift %+.3f\n\n", pb, pa, pa-pb)
	}
	if len(seeds) < 2 {
		return
	}
	var clean, poisoned, lift, unjudged []float64
	misled, never := 0, 0
	for _, s := range seeds {
		for _, q := range s.Clean.Held {
			if q.Kind != "" {
				misled++
				if q.Unjudged {
					never++
				}
			}
		}
		_, _, _, _, u := s.Clean.Recovery(func(q LearningQuestion) bool { return q.Kind != "" && q.Unjudged })
		if !math.IsNaN(u) {
			unjudged = append(unjudged, u)
		}
		_, _, _, _, r := s.Clean.Recovery(all)
		_, _, _, _, p := s.Poisoned.Recovery(all)
		_, pb, _, pa, _ := s.Plain.Recovery(all)
		clean, poisoned, lift = append(clean, r), append(poisoned, p), append(lift, pa-pb)
	}
	spread := func(xs []float64, format string) string {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range xs {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		return fmt.Sprintf(format+" ("+format+" to "+format+")", mean(xs), lo, hi)
	}
	names := make([]string, len(seeds))
	for i, s := range seeds {
		names[i] = strconv.FormatUint(s.Seed, 10)
	}
	fmt.Fprintf(w, "Seeds %s — recovery clean %s, poisoned %s, plain LoCoMo lift %s\n", strings.Join(names, ","),
		spread(clean, "%.2f"), spread(poisoned, "%.2f"), spread(lift, "%+.3f"))
	if misled > 0 && len(unjudged) > 0 {
		fmt.Fprintf(w, "Misled held-out questions whose misleading memories were never judged: %d of %d (%.2f); their recovery (clean) %s\n",
			never, misled, float64(never)/float64(misled), spread(unjudged, "%.2f"))
	}
}
