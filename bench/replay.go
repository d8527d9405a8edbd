package bench

// The replay harness (engram bench replay): relearn a learning run's
// recorded thumbs through the learning package's own code, under a
// policy variant, and re-rank the run's held-out recalls, in seconds.

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/learning"
)

// ReplayRun is one run of a trace (clean, poisoned or plain, by the
// trace's run name): the held-out questions as the live run measured
// them after feedback and as the replay re-ranks them.
type ReplayRun struct {
	Run            string
	Live, Replayed *LearningRun
}

// Replay reads a trace of engram bench learning (see LearningTrace) and
// replays, tenant by tenant, its judged recalls in order through the
// code a feedback's transaction runs, under policy, scoring and fbc (the
// service's scoring and feedback configuration), keeping the learned
// state in memory as the store keeps it: the helpfulness evidence by key
// and the rater reputations (learning.Feedback.Learn), and each judged
// memory's confidence, votes and needs_revision (learning.Feedback.Credit,
// by its share of the answer, learning.Feedback.Shares, times the rater's
// weight), under the rater's cap (feedback.rater_cap; every credit of a
// run counts as inside the cap's window, as a benchmark run of minutes
// is). A judged recall's memories are those it injected, ranked by their
// score without helpfulness (Score / Help as recorded), with the reward,
// confidence and revision factors the replayed credits give them in
// place of the recorded ones, times the helpfulness factor the replayed
// evidence gives them (learning.Scorer.Helpful); the memory exploration
// held back counts as held back. Then each held-out question's
// candidates (measured before feedback, injected and left out) are
// re-ranked the same way, from the live run's measurement after
// feedback (before, for a candidate it did not return).
//
// Not replayed: corrections (the benchmark sends none), learned queries
// (feedback.learn_queries), the decay clock (a benchmark run lasts
// minutes) and candidates the relevance cut dropped before feedback. A
// trace without the reward and confidence factors replays no credit.
func Replay(r io.Reader, policy learning.Policy, scoring learning.ScoreConfig, fbc engram.FeedbackConfig) ([]ReplayRun, error) {
	scorer := learning.NewScorer(scoring, nil).WithPolicy(policy)
	fb := learning.NewFeedback(nil, scorer, fbc)
	var runs []ReplayRun
	var t *replayTenant
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		var line LearningTrace
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, fmt.Errorf("bench replay: trace line %d: %w", n, err)
		}
		if len(runs) == 0 || runs[len(runs)-1].Run != line.Run {
			runs = append(runs, ReplayRun{Run: line.Run, Live: &LearningRun{}, Replayed: &LearningRun{}})
		}
		run := &runs[len(runs)-1]
		if t == nil || t.run != line.Run || t.tenant != line.Tenant {
			t = newReplayTenant(line.Run, line.Tenant, len(run.Live.Held), scoring)
		}
		switch line.Phase {
		case "before":
			t.before(run, line)
		case "train":
			if line.Up == nil {
				return nil, fmt.Errorf("bench replay: trace line %d: a judged recall without its thumb", n)
			}
			t.train(fb, scorer, line)
			run.Live.Thumbs++
			run.Replayed.Thumbs++
		case "after":
			if err := t.after(scorer, run, line); err != nil {
				return nil, fmt.Errorf("bench replay: trace line %d: %w", n, err)
			}
		default:
			return nil, fmt.Errorf("bench replay: trace line %d: unknown phase %q", n, line.Phase)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("bench replay: %w", err)
	}
	return runs, nil
}

// replayTenant is one tenant of a replayed run: its learned state and
// its held-out questions.
type replayTenant struct {
	run, tenant string
	start       int // index of its first held-out question in the run's
	help        map[string]engram.Helpfulness
	reps        map[string]engram.Reputation
	// held are the held-out questions' candidates, by question.
	held   map[int][]TraceItem
	misled map[int][]string
	judged map[string]bool
	// mems is what feedback moves of each memory a replayed credit moved:
	// confidence, votes and needs_revision, from the factors recorded
	// where the memory was first judged (no credit had moved it then).
	mems map[string]*engram.Memory
	// used counts each rater's applied credits by memory (the cap).
	used map[[2]string]int
	// prior is the reward factor's Beta prior, α and β.
	prior [2]float64
}

func newReplayTenant(run, tenant string, start int, scoring learning.ScoreConfig) *replayTenant {
	return &replayTenant{run: run, tenant: tenant, start: start, help: map[string]engram.Helpfulness{},
		reps: map[string]engram.Reputation{}, held: map[int][]TraceItem{}, misled: map[int][]string{}, judged: map[string]bool{},
		mems: map[string]*engram.Memory{}, used: map[[2]string]int{}, prior: [2]float64{scoring.PriorUp, scoring.PriorDown}}
}

// base is an item's score without its helpfulness factor.
func base(it TraceItem) float64 {
	if it.Help > 0 {
		return it.Score / it.Help
	}
	return 0
}

// credited reports whether an item records the factors a credit moves.
func credited(it TraceItem) bool { return it.Reward > 0 && it.Reward < 1 && it.Confidence > 0 }

// base is an item's score without its helpfulness factor, with the
// reward, confidence and revision factors of the item's memory as the
// replayed credits left them in place of those the item records.
func (t *replayTenant) base(scorer *learning.Scorer, it TraceItem) float64 {
	b := base(it)
	m, ok := t.mems[it.ID]
	if !ok || !credited(it) {
		return b
	}
	now := scorer.Score(m, 1)
	b *= now.Reward / it.Reward * now.Confidence / it.Confidence
	if it.Revision > 0 { // an older trace does not say whether its score holds the demotion
		b *= now.Revision / it.Revision
	}
	return b
}

// memory is the credit state of the item's memory, read from the
// factors recorded the first time a credit moves it (its up votes from
// the reward factor under the configured prior: exact while none was
// cast, as in the benchmark, where every memory starts unjudged); nil
// for an item without them.
func (t *replayTenant) memory(it TraceItem) *engram.Memory {
	if m, ok := t.mems[it.ID]; ok || !credited(it) {
		return m
	}
	a, b := t.prior[0], t.prior[1]
	up := max(math.Round((it.Reward*(a+b)-a)/(1-it.Reward)), 0)
	m := &engram.Memory{ID: it.ID, Confidence: it.Confidence, UpCount: int64(up), NeedsRevision: it.Revision > 0 && it.Revision < 1}
	t.mems[it.ID] = m
	return m
}

// before records a held-out question measured before feedback: its
// outcome (as RunLearning counts it) in both runs, and its candidates.
func (t *replayTenant) before(run *ReplayRun, line LearningTrace) {
	cands := append(append([]TraceItem(nil), line.Items...), line.LeftOut...)
	slices.SortStableFunc(cands, func(a, b TraceItem) int { return cmp.Compare(b.Score, a.Score) })
	gold := goldSet(line.Gold)
	ranked := labels(cands)
	q := LearningQuestion{Category: line.Category, Before: recallAt10(ranked, gold)}
	var struck []string
	for i, l := range ranked {
		if !strings.HasPrefix(l, misleadingLabel) {
			struck = append(struck, l)
		} else if q.Kind == "" && i < 10 {
			q.Kind, _, _ = strings.Cut(strings.TrimPrefix(l, misleadingLabel), ":")
		}
	}
	q.Ceiling = recallAt10(struck, gold)
	for _, it := range line.Items {
		if it.At < 10 && strings.HasPrefix(it.Label, misleadingLabel) {
			t.misled[line.Question] = append(t.misled[line.Question], it.ID)
		}
	}
	t.held[line.Question] = cands
	run.Live.Held = append(run.Live.Held, q)
	run.Replayed.Held = append(run.Replayed.Held, q)
}

// train replays one judged recall's thumb.
func (t *replayTenant) train(fb *learning.Feedback, scorer *learning.Scorer, line LearningTrace) {
	type cand struct {
		it    TraceItem
		score float64
	}
	var cs []cand
	control := ""
	if line.Probe != nil {
		control = line.Probe.ID
	}
	for _, it := range line.Items {
		t.judged[it.ID] = true
		if s := t.base(scorer, it) * t.factor(scorer, it, it.ID == control); s > 0 {
			cs = append(cs, cand{it, s})
		}
	}
	if len(cs) == 0 {
		return
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.it.ID, b.it.ID)
	})
	signal := -1.0
	if *line.Up {
		signal = 1
	}
	scores := make(map[string]float64, len(cs))
	for _, c := range cs {
		scores[c.it.ID] = c.score
	}
	shares, weight, answers := fb.Shares(scores), fb.RaterWeight(t.reps[line.Rater]), t.help[engram.AnswersKey]
	limit, _ := fb.RaterLimit()
	judged := make([]learning.JudgedMemory, len(cs))
	for i, c := range cs {
		judged[i] = learning.JudgedMemory{ID: c.it.ID, Origin: c.it.Origin, Features: c.it.Of, Evidence: t.evidence(c.it)}
		used := [2]string{line.Rater, c.it.ID}
		if t.used[used] >= limit {
			judged[i].Capped = true
			continue
		}
		t.used[used]++
		if m := t.memory(c.it); m != nil {
			fb.Credit(m, signal, shares[c.it.ID]*weight, "", answers)
		}
	}
	var arms learning.Arms
	if line.Held != nil {
		arms.HeldBack = line.Held.ID
	}
	if line.Probe != nil {
		arms.Probe = line.Probe.Of
	}
	for _, c := range cs {
		if c.it.Explored {
			arms.Probe, arms.ProbeIn = c.it.Of, true
		}
	}
	deltas, rep := fb.Learn(t.reps[line.Rater], signal, judged, arms)
	for k, d := range deltas {
		t.help[k] = sumHelp(t.help[k], d)
	}
	r := t.reps[line.Rater]
	r.Agree, r.Disagree, r.Votes = r.Agree+rep.Agree, r.Disagree+rep.Disagree, r.Votes+rep.Votes
	t.reps[line.Rater] = r
}

// after counts a held-out question measured after feedback: the live
// outcome from the line, the replayed one by re-ranking the question's
// candidates.
func (t *replayTenant) after(scorer *learning.Scorer, run *ReplayRun, line LearningTrace) error {
	cands, ok := t.held[line.Question]
	i := t.start + line.Question
	if !ok || i >= len(run.Live.Held) {
		return fmt.Errorf("held-out question %d of %s measured after feedback but not before", line.Question, line.Tenant)
	}
	gold := goldSet(line.Gold)
	live := append(append([]TraceItem(nil), line.Items...), line.LeftOut...)
	slices.SortStableFunc(live, func(a, b TraceItem) int { return cmp.Compare(b.Score, a.Score) })
	now := make(map[string]TraceItem, len(live))
	for _, it := range live {
		now[it.ID] = it
	}
	scores := make(map[string]float64, len(cands))
	for _, it := range cands {
		b := t.base(scorer, it)
		if l, ok := now[it.ID]; ok && l.Help > 0 {
			b = t.base(scorer, l)
		}
		scores[it.ID] = b * t.factor(scorer, it, false)
	}
	replayed := append([]TraceItem(nil), cands...)
	slices.SortStableFunc(replayed, func(a, b TraceItem) int { return cmp.Compare(scores[b.ID], scores[a.ID]) })
	unjudged := !slices.ContainsFunc(t.misled[line.Question], func(id string) bool { return t.judged[id] })
	run.Live.Held[i].After, run.Live.Held[i].Unjudged = recallAt10(labels(live), gold), unjudged
	run.Replayed.Held[i].After, run.Replayed.Held[i].Unjudged = recallAt10(labels(replayed), gold), unjudged
	return nil
}

// factor is an item's helpfulness factor under the replayed state, as
// a kind probe left it: without its feature factor for an item the
// probe let in, with the factor its kinds' evidence gives (heeding no
// measured impact) for the control arm's memory (see
// learning.Recaller.WithKindProbes).
func (t *replayTenant) factor(scorer *learning.Scorer, it TraceItem, control bool) float64 {
	e := t.evidence(it)
	f, _, _ := scorer.Helpful(e)
	k, _ := scorer.Features(e)
	switch {
	case k <= 0:
	case it.Explored:
		f /= k
	case control:
		f *= scorer.Unproven(e) / k
	}
	return f
}

// evidence is what the store would read of an item's helpfulness (see
// engram.FeedbackTx.FindHelpEvidence): its own, its origin's, every
// memory's, the tenant's main origin's (the origin key with the most
// evidence, the first such key on a tie), the judged answers', and its
// features' with the features' reference.
func (t *replayTenant) evidence(it TraceItem) engram.HelpEvidence {
	e := engram.HelpEvidence{Memory: t.help[it.ID], Origin: t.help[it.Origin], Origins: t.help[engram.AllOrigins],
		Answers: t.help[engram.AnswersKey], Kinds: t.help[engram.AllFeatures]}
	main, most := "", -1.0
	for k, h := range t.help {
		if !strings.HasPrefix(k, engram.OriginPrefix) || k == engram.AllOrigins {
			continue
		}
		if n := h.Good + h.Bad; n > most || (n == most && k < main) {
			main, most = k, n
		}
	}
	if main != "" {
		e.Main = t.help[main]
	}
	for _, f := range it.Of {
		if h, ok := t.help[f]; ok {
			if e.Features == nil {
				e.Features = map[string]engram.Helpfulness{}
			}
			e.Features[f] = h
		}
	}
	return e
}

func sumHelp(a, b engram.Helpfulness) engram.Helpfulness {
	add := func(x, y engram.Outcomes) engram.Outcomes {
		return engram.Outcomes{N: x.N + y.N, Sum: x.Sum + y.Sum, Sq: x.Sq + y.Sq}
	}
	return engram.Helpfulness{Good: a.Good + b.Good, Bad: a.Bad + b.Bad, With: add(a.With, b.With), Without: add(a.Without, b.Without)}
}

func goldSet(gold []string) map[string]bool {
	out := make(map[string]bool, len(gold))
	for _, g := range gold {
		out[g] = true
	}
	return out
}

func labels(items []TraceItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Label
	}
	return out
}

// PrintReplay writes, per run of the trace, the held-out recovery the
// live run measured and the replay's.
func PrintReplay(w io.Writer, runs []ReplayRun, policy learning.Policy) {
	fmt.Fprintf(w, "Policy %+v. Recall@10 of the held-out questions; recovery = (after − before) / (ceiling − before).\n\n", policy)
	rec := func(x float64) string {
		if math.IsNaN(x) {
			return "—"
		}
		return fmt.Sprintf("%.2f", x)
	}
	header := []string{"run", "questions", "n", "thumbs", "before", "ceiling", "after (live)", "recovery (live)", "after (replay)", "recovery (replay)"}
	var rows [][]string
	for _, r := range runs {
		for _, q := range []struct {
			name string
			keep func(LearningQuestion) bool
		}{
			{"all held-out", all},
			{"misled, never judged", func(q LearningQuestion) bool { return q.Kind != "" && q.Unjudged }},
		} {
			n, b, c, la, lr := r.Live.Recovery(q.keep)
			if n == 0 {
				continue
			}
			_, _, _, ra, rr := r.Replayed.Recovery(q.keep)
			rows = append(rows, []string{r.Run, q.name, fmt.Sprint(n), fmt.Sprint(r.Live.Thumbs), f3(b), f3(c), f3(la), rec(lr), f3(ra), rec(rr)})
		}
	}
	table(w, header, rows)
}
