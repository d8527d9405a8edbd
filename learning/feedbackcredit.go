package learning

// What a feedback does to one memory: its share of the answer, the vote
// it counts, how far its learned fields move, and the rater's cap.

import (
	"math"
	"strings"
	"time"

	"github.com/engram-memory/engram"
)

// candidates returns the scores of the items a feedback on the recall
// judges: every item it injected but pinned context (see
// engram.ScoreBreakdown.Pinned). A pinned identity memory goes into a
// recall whatever the query and, scored as if it matched, used to tie
// with the memory that answered: it took a full share, the vote and the
// helpfulness evidence of answers it had no part in, and a tenant's
// most promoted memory was the user's name. It is context, not a
// candidate: left out here, it takes no share, vote or evidence, and the
// best of the others takes the answer. Feedback on the memory itself
// (FeedbackInput.MemoryID) still moves it.
func candidates(rec *engram.RecallScores) map[string]float64 {
	out := make(map[string]float64, len(rec.Scores))
	for id, s := range rec.Scores {
		if !rec.Pinned[id] {
			out[id] = s
		}
	}
	return out
}

// Shares returns each injected memory's share of a feedback on a recall,
// in (0, 1], from the scores the recall gave them (id → score): its score
// over the recall's best, discounted by its rank as its credit from a
// good answer is, 1 / (1 + rank / positionHalf), where rank counts the
// items scored strictly higher (ties share a rank). The
// memory that drove the answer takes the full signal; one injected below
// it, which mostly rode along with a question it does not answer, moves
// little. Fixed on the learning benchmark's tuning seeds: undiscounted
// shares moved every rider's confidence down with each bad answer, which
// sank true memories central to many questions (plain LoCoMo).
func (f *Feedback) Shares(scores map[string]float64) map[string]float64 {
	top := 0.0
	for _, s := range scores {
		top = math.Max(top, s)
	}
	w := make(map[string]float64, len(scores))
	for id, s := range scores {
		if !(top > 0 && s > 0) {
			continue
		}
		higher := 0 // a recall injects tens of items at most
		for _, o := range scores {
			if o > s {
				higher++
			}
		}
		w[id] = s / top / (1 + float64(higher)/positionHalf)
	}
	return w
}

// Vote is what a non-zero signal counts on an injected memory or
// reflection, by its share: +1, −1, or 0. A memory or reflection that
// carried the whole answer counts a vote: the best-scored of the recall
// (ties included). A memory's share comes scaled by its rater's weight
// (see Credit), so only a rater in good standing (weight 1: agreeing with
// the others' evidence at least as often as not) counts votes on
// memories. The others move by their share, but their votes, which the
// reward factor and needs_revision count, would mostly record that a
// memory rode along.
func (f *Feedback) Vote(signal, share float64) int {
	switch {
	case share < voteShare || signal == 0:
		return 0
	case signal > 0:
		return 1
	}
	return -1
}

// voteShare is the share of an answer (times the rater's weight) a memory
// must carry to count a vote. Fixed on the learning benchmark's tuning
// seeds: against 0.5 (any memory scored at least half the best), clean
// recovery 0.762 → 0.787, poisoned 0.758 → 0.791, plain LoCoMo −0.0008 →
// −0.0005 over seeds 1 and 11–19.
const voteShare = 1.0

// RaterLimit is how many feedbacks of one rater may move one memory
// within the window (feedback.rater_cap per feedback.rater_window); later
// ones are recorded but not applied.
func (f *Feedback) RaterLimit() (int, time.Duration) { return f.cfg.RaterCap, f.cfg.RaterWindow }

// Credit moves one memory by a signal s in [-1, 1] with weight w, its
// share of the answer (DESIGN §4): confidence a step towards 1 (positive)
// or 0 (negative) and the reward's moving average, both scaled by w. The
// memory that carried the whole answer (see Vote) also counts a vote up
// or down (up votes raise the reward factor, down votes count towards
// needs_revision) and has its stability grown or shrunk, and, when
// positive, restarts its decay clock and, with
// feedback.learn_queries, learns the recall's query (see
// engram.Memory.Learned); needs_revision is set once down votes lead by
// the threshold, read against the tenant's answers (see revisionLead),
// and is cleared only by a person, with PATCH. A down vote never touches
// the clock: punishment is not use.
func (f *Feedback) Credit(m *engram.Memory, s, w float64, query string, answers engram.Helpfulness) {
	if s > 0 {
		m.Confidence += f.cfg.ConfidenceStep * s * w * (1 - m.Confidence)
	} else {
		m.Confidence += f.cfg.ConfidenceStep * s * w * m.Confidence
	}
	m.Reward += f.cfg.RewardRate * w * (s - m.Reward)
	if f.Vote(s, w) != 0 {
		if s > 0 {
			m.UpCount++
		} else {
			m.DownCount++
		}
		m.Stability = f.scorer.Reinforce(m.Priority, m.Stability, s > 0)
		if s > 0 {
			m.ReinforcedAt = f.scorer.now().UTC().Truncate(time.Microsecond)
			if query != "" && f.cfg.LearnQueries {
				m.Learned = learn(m.Learned, query)
			}
		}
	}
	if revisionLead(m.UpCount, m.DownCount, baseRate(answers)) >= float64(f.cfg.RevisionThreshold) {
		m.NeedsRevision = true
	}
}

// revisionLead is how far a memory's down votes lead its up votes, each
// vote weighed by how little the tenant's answers lead one to expect it:
// 2·(p·down − (1 − p)·up), p the tenant's share of good answers. Where
// half the answers are good (and before any answer is judged) that is
// down − up. Where most answers are bad, a memory injected into them
// collects down votes whether or not it misled: a down vote says less
// and an up vote more, so an ordinary memory is not flagged for being
// injected often.
func revisionLead(up, down int64, p float64) float64 {
	return 2 * (p*float64(down) - (1-p)*float64(up))
}

// maxLearnedChars bounds Memory.Learned; the oldest queries go first.
const maxLearnedChars = 2000

// learn appends query to learned once, keeping the newest queries within
// maxLearnedChars.
func learn(learned, query string) string {
	query = strings.Join(strings.Fields(query), " ")
	var qs []string
	for _, q := range strings.Split(learned, "\n") {
		if q != "" && q != query {
			qs = append(qs, q)
		}
	}
	qs = append(qs, query)
	for len(qs) > 1 && len(strings.Join(qs, "\n")) > maxLearnedChars {
		qs = qs[1:]
	}
	out := strings.Join(qs, "\n")
	if len(out) > maxLearnedChars { // one query longer than the bound
		r := []rune(out)
		out = string(r[:min(len(r), maxLearnedChars/4)])
	}
	return out
}
