package learning

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/engram-memory/engram"
)

// The feedback workflow. Everything a feedback means is decided here:
// each injected memory's share (Shares), how far a credit moves it
// (Credit), the rater's cap (feedback.rater_cap per feedback.rater_window)
// and weight (RaterWeight), the helpfulness evidence and reputation it
// adds (Evidence, Agreement), the votes on injected reflections (Vote),
// which answers pair and by what margin (Pair, CorrectionMargin), and what
// a correction becomes and supersedes (Correction). The store is given
// the outcome, one transaction-level step at a time (engram.FeedbackTx),
// and keeps it atomic: it decides nothing.

// maxPeers bounds a regeneration group as one feedback sees it: the
// newest answers only, so that a common prompt such as "hi" in a tenant
// without sessions cannot make one thumb lock or compare thousands of rows.
const maxPeers = 20

// workflow returns the workflow of one valid feedback, for the store to
// run in its transaction (FeedbackStore.RunFeedback). It records the
// feedback and credits the memories its target injected (one memory event
// each), updates the interaction's latest judgement and makes the
// preference pairs it completes. A repeated idempotency key returns the
// first result with Replayed set and changes nothing. ENOTFOUND for a
// target outside the tenant.
func (f *Feedback) workflow(in engram.FeedbackInput) engram.FeedbackFunc {
	return func(ctx context.Context, tx engram.FeedbackTx) (*engram.FeedbackResult, error) {
		return f.apply(ctx, tx, in)
	}
}

// apply is one run of a feedback's workflow in tx. in is a copy: a run
// may be repeated (see FeedbackStore.RunFeedback).
func (f *Feedback) apply(ctx context.Context, tx engram.FeedbackTx, in engram.FeedbackInput) (*engram.FeedbackResult, error) {
	if prior, err := findPrior(ctx, tx, in.IdempotencyKey); prior != nil || err != nil {
		return prior, err
	}
	signal := in.Signal()
	answer, rec, shares, scores, err := f.target(ctx, tx, &in)
	if err != nil {
		return nil, err
	}
	query := ""
	if rec != nil {
		query = rec.Query
	}
	targets := make([]string, 0, len(shares))
	for id, w := range shares {
		if w > 0 {
			targets = append(targets, id)
		}
	}
	rows := map[string]*engram.Memory{} // the injected memories' full rows, when a correction needs their text
	res := &engram.FeedbackResult{FeedbackID: tx.FeedbackID(), Signal: signal, Credited: []engram.CreditedMemory{}, Pairs: []string{}}
	// A recall that injected nothing credits nothing and teaches nothing.
	if signal != 0 && len(targets) > 0 {
		// Memories ("mem_…") before reflections ("refl_…"), each by id.
		sort.Strings(targets)
		var memories, reflections []string
		for _, id := range targets {
			if strings.HasPrefix(id, engram.ReflectionPrefix) {
				reflections = append(reflections, id)
			} else {
				memories = append(memories, id)
			}
		}
		mems, err := tx.LockMemories(ctx, memories)
		if err != nil {
			return nil, err
		}
		l, err := f.startLearning(ctx, tx, in.Rater, signal, mems, scores)
		if err != nil {
			return nil, err
		}
		agree := map[string]bool{}
		if answer != nil && in.Correction != "" && in.Correction != answer.Response {
			// LockMemories reads the credit columns only: the text is read
			// once more, for a correction alone (and correct reuses it).
			for _, m := range mems {
				if !m.Valid {
					continue // credit skips it
				}
				full, err := tx.FindMemory(ctx, m.ID)
				if err != nil {
					return nil, err
				}
				rows[m.ID], agree[m.ID] = full, f.Agrees(in.Correction, full)
			}
		}
		if res.Credited, err = f.credit(ctx, tx, in, signal, mems, shares, agree, l, query); err != nil {
			return nil, err
		}
		for _, cm := range res.Credited {
			// A memory the correction agrees with takes no evidence of
			// the bad answer it rested under.
			if !cm.Capped && !agree[cm.ID] {
				l.credited(cm.ID)
			}
		}
		for _, id := range reflections {
			cr, err := f.creditReflection(ctx, tx, in, signal, id, shares[id])
			if err != nil {
				return nil, err
			}
			if cr != nil {
				res.Reflections = append(res.Reflections, *cr)
			}
		}
		arms, err := f.arms(ctx, tx, rec, l)
		if err != nil {
			return nil, err
		}
		l.finish(arms, in.MemoryID == "")
		tx.AddLearning(l.deltas, in.Rater, l.reputation())
	}
	if answer != nil {
		pairs, err := f.judge(ctx, tx, answer, in, signal)
		if err != nil {
			return nil, err
		}
		res.Pairs = pairs
		if in.Correction != "" && in.Correction != answer.Response {
			if res.Knowledge, err = f.correct(ctx, tx, answer, in, res.Credited, shares, rows); err != nil {
				return nil, err
			}
		}
	}
	// The feedback goes in last, with its result.
	if err := tx.SaveFeedback(ctx, in, res); err != nil {
		return nil, err
	}
	return res, nil
}

// findPrior returns the result stored under a feedback's idempotency
// key, with Replayed set, or nil when there is none.
func findPrior(ctx context.Context, tx engram.FeedbackTx, key string) (*engram.FeedbackResult, error) {
	if key == "" {
		return nil, nil
	}
	prior, err := tx.FindFeedbackResult(ctx, key)
	if err == nil {
		prior.Replayed = true
		return prior, nil
	}
	if engram.ErrorCode(err) != engram.ENOTFOUND {
		return nil, err
	}
	return nil, nil
}

// ratedBy reports whether a feedback naming end user rater ("" none)
// may rate an answer or recall made for owner: its own, a shared one, or
// any when it names no user. Another user's is not found, as their
// memories are not (docs/users.md).
func ratedBy(owner, rater string) bool {
	return rater == "" || owner == "" || owner == rater
}

// target reads a feedback's target: the answer it judges (and in.RecallID
// becomes that answer's recall), the recall it is credited through, and
// each candidate's share and score. ENOTFOUND for a target outside the
// tenant.
func (f *Feedback) target(ctx context.Context, tx engram.FeedbackTx, in *engram.FeedbackInput) (*engram.Answer, *engram.RecallScores,
	map[string]float64, map[string]float64, error) {
	var answer *engram.Answer
	var rec *engram.RecallScores
	var err error
	switch {
	case in.InteractionID != "":
		if answer, err = tx.FindAnswer(ctx, in.InteractionID); err != nil {
			return nil, nil, nil, nil, err
		}
		if !ratedBy(answer.UserID, in.UserID) {
			return nil, nil, nil, nil, engram.Errorf(engram.ENOTFOUND, "interaction %q not found", in.InteractionID)
		}
		// A feedback on an answer is credited through its recall.
		in.RecallID = answer.RecallID
		if answer.RecallID != "" {
			if rec, err = tx.FindRecallScores(ctx, answer.RecallID); err != nil {
				return nil, nil, nil, nil, err
			}
			if !ratedBy(rec.UserID, in.UserID) { // a shared answer given from another user's recall
				return nil, nil, nil, nil, engram.Errorf(engram.ENOTFOUND, "interaction %q not found", in.InteractionID)
			}
		}
	case in.RecallID != "":
		if rec, err = tx.FindRecallScores(ctx, in.RecallID); err != nil {
			return nil, nil, nil, nil, err
		}
		if !ratedBy(rec.UserID, in.UserID) {
			return nil, nil, nil, nil, engram.Errorf(engram.ENOTFOUND, "recall %q not found", in.RecallID)
		}
	default:
		if _, err := tx.FindMemory(ctx, in.MemoryID); err != nil {
			return nil, nil, nil, nil, err
		}
		return nil, nil, map[string]float64{in.MemoryID: 1}, map[string]float64{in.MemoryID: 1}, nil
	}
	if rec == nil {
		return answer, nil, map[string]float64{}, map[string]float64{}, nil
	}
	scores := candidates(rec)
	return answer, rec, f.Shares(scores), scores, nil
}

// since is the start of the rater cap's window for a feedback at now.
func (f *Feedback) since(now time.Time) time.Time { return now.Add(-f.cfg.RaterWindow) }

// credit applies one feedback to mems (as LockMemories read them, in id
// order): a memory the rater's cap is reached for is recorded as capped
// and left alone; a tombstoned one is skipped; the others move by their
// share times the rater's weight (Credit). A memory that agrees with
// the feedback's correction (agree, see Agrees) is credited as a good
// answer would credit it (signal at least 1, a thumb up): the answer was
// wrong, not what it rested on. The store writes them in one
// WriteCredits, under the feedback's own signal.
func (f *Feedback) credit(ctx context.Context, tx engram.FeedbackTx, in engram.FeedbackInput, signal float64, mems []*engram.Memory,
	shares map[string]float64, agree map[string]bool, l *learningTx, query string) ([]engram.CreditedMemory, error) {
	out := []engram.CreditedMemory{}
	if len(mems) == 0 {
		return out, nil
	}
	ids := make([]string, len(mems))
	for i, m := range mems {
		ids[i] = m.ID
	}
	used, err := tx.CountCredits(ctx, in.Rater, ids, f.since(tx.Now()))
	if err != nil {
		return nil, err
	}
	w := engram.CreditWrite{FeedbackID: tx.FeedbackID(), Rater: in.Rater, Signal: signal, At: tx.Now()}
	type judged struct {
		m      *engram.Memory
		weight float64
		capped bool
	}
	var all []judged
	for _, m := range mems {
		if !m.Valid {
			continue
		}
		capped := used[m.ID] >= int64(f.cfg.RaterCap)
		weight := shares[m.ID] * l.raterWeight
		if !capped {
			s := signal
			if agree[m.ID] {
				s = max(signal, 1)
			}
			f.Credit(m, s, weight, query, l.answers)
			w.Moved = append(w.Moved, m)
		}
		w.Credits = append(w.Credits, engram.Credit{ID: m.ID, Applied: !capped})
		all = append(all, judged{m, weight, capped})
	}
	if err := tx.WriteCredits(ctx, w); err != nil {
		return nil, err
	}
	for _, j := range all {
		m := j.m
		out = append(out, engram.CreditedMemory{ID: m.ID, Version: m.Version, Weight: j.weight, Reward: m.Reward,
			Confidence: m.Confidence, Stability: m.Stability, NeedsRevision: m.NeedsRevision, UpCount: m.UpCount,
			DownCount: m.DownCount, Capped: j.capped})
	}
	return out, nil
}

// creditReflection counts one feedback's vote on an injected reflection
// (Vote, by its share), under the same per-rater cap as memories; a
// reflection gone from the tenant is skipped (nil).
func (f *Feedback) creditReflection(ctx context.Context, tx engram.FeedbackTx, in engram.FeedbackInput, signal float64, id string,
	share float64) (*engram.CreditedReflection, error) {
	r, err := tx.LockReflection(ctx, id)
	if engram.ErrorCode(err) == engram.ENOTFOUND {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	used, err := tx.CountCredits(ctx, in.Rater, []string{id}, f.since(tx.Now()))
	if err != nil {
		return nil, err
	}
	capped := used[id] >= int64(f.cfg.RaterCap)
	if !capped {
		switch f.Vote(signal, share) {
		case 1:
			r.UpCount++
		case -1:
			r.DownCount++
		}
		if err := tx.UpdateReflectionVotes(ctx, id, r.UpCount, r.DownCount); err != nil {
			return nil, err
		}
	}
	if err := tx.WriteCredits(ctx, engram.CreditWrite{FeedbackID: tx.FeedbackID(), Rater: in.Rater, Signal: signal, At: tx.Now(),
		Credits: []engram.Credit{{ID: id, Applied: !capped}}}); err != nil {
		return nil, err
	}
	return &engram.CreditedReflection{ID: id, Weight: share, UpCount: r.UpCount, DownCount: r.DownCount, Capped: capped}, nil
}

// judge records the answer's latest judgement and makes the pairs it
// completes: a correction pair when the feedback carries a correction
// that differs from the answer (CorrectionMargin), and a pair with every
// other judged answer of the same regeneration group that Pair pairs. A
// pair is made once per pair of answers (or correction), whatever the
// later feedback.
func (f *Feedback) judge(ctx context.Context, tx engram.FeedbackTx, a *engram.Answer, in engram.FeedbackInput, signal float64) ([]string, error) {
	mine := engram.Judgement{Signal: signal, Rating: in.Rating != 0}
	// Lock the whole regeneration group before reading it: two answers
	// judged at once must see each other, or neither would make their pair.
	if err := tx.LockAnswers(ctx, a.GroupKey, maxPeers+1); err != nil {
		return nil, err
	}
	fbID, at := tx.FeedbackID(), tx.Now()
	if err := tx.UpdateJudgement(ctx, a.ID, mine, fbID); err != nil {
		return nil, err
	}
	refs := func(a *engram.Answer) ([]engram.MemoryRef, error) {
		if a.RecallID == "" {
			return []engram.MemoryRef{}, nil
		}
		rec, err := tx.FindRecallScores(ctx, a.RecallID)
		if err != nil {
			return nil, err
		}
		return rec.Injected, nil
	}
	mineRefs, err := refs(a)
	if err != nil {
		return nil, err
	}
	made := []string{}
	add := func(p *engram.Pair, key string) error {
		p.Prompt, p.Messages, p.Category, p.CreatedAt = a.Prompt, a.Messages, a.Category, at
		ok, err := tx.SavePair(ctx, p, key)
		if ok {
			made = append(made, p.ID)
		}
		return err
	}
	if in.Correction != "" && in.Correction != a.Response {
		sum := sha256.Sum256([]byte(in.Correction))
		if err := add(&engram.Pair{Kind: engram.PairCorrection, Chosen: in.Correction, Rejected: a.Response,
			Margin: f.CorrectionMargin(signal), RejectedInteractionID: a.ID, FeedbackIDs: []string{fbID},
			ChosenMemories: mineRefs, RejectedMemories: mineRefs}, "correction:"+a.ID+":"+hex.EncodeToString(sum[:16])); err != nil {
			return nil, err
		}
	}
	peers, err := tx.FindJudgedAnswers(ctx, a.GroupKey, a.ID, maxPeers)
	if err != nil {
		return nil, err
	}
	for _, peer := range peers {
		if peer.Response == a.Response || peer.Last == nil {
			continue
		}
		kind, margin, ok := f.Pair(mine, *peer.Last)
		if !ok {
			continue
		}
		peerRefs, err := refs(peer)
		if err != nil {
			return nil, err
		}
		chosen, rejected := a, peer
		chosenRefs, rejectedRefs := mineRefs, peerRefs
		chosenFB, rejectedFB := fbID, peer.LastFeedbackID
		if signal < peer.Last.Signal {
			chosen, rejected, chosenRefs, rejectedRefs, chosenFB, rejectedFB = peer, a, peerRefs, mineRefs, peer.LastFeedbackID, fbID
		}
		x, y := a.ID, peer.ID
		if y < x {
			x, y = y, x
		}
		if err := add(&engram.Pair{Kind: kind, Chosen: chosen.Response, Rejected: rejected.Response, Margin: margin,
			ChosenInteractionID: chosen.ID, RejectedInteractionID: rejected.ID, FeedbackIDs: []string{chosenFB, rejectedFB},
			ChosenMemories: chosenRefs, RejectedMemories: rejectedRefs}, "answers:"+x+"|"+y); err != nil {
			return nil, err
		}
	}
	return made, nil
}

// correct stores what a correction became (Correction): the new memory,
// or the live memory that already says the same, and the superseded
// memories marked needs_revision with superseded_by naming it. Memories
// the rater's cap kept the feedback from crediting are not superseded
// either. A correction that cannot be a valid memory stays a preference
// pair only (nil). rows holds the memories' rows apply already read, by
// id; the others are read here.
func (f *Feedback) correct(ctx context.Context, tx engram.FeedbackTx, a *engram.Answer, in engram.FeedbackInput,
	credited []engram.CreditedMemory, shares map[string]float64, rows map[string]*engram.Memory) (*engram.Knowledge, error) {
	var rested []engram.Rested
	for _, c := range credited {
		if c.Capped {
			continue
		}
		m := rows[c.ID]
		if m == nil {
			var err error
			if m, err = tx.FindMemory(ctx, c.ID); err != nil {
				return nil, err
			}
		}
		rested = append(rested, engram.Rested{Memory: m, Share: shares[c.ID]})
	}
	answer := a.Interaction
	if in.UserID != "" { // the feedback's user: a correction of a shared answer is theirs
		answer.UserID = in.UserID
	}
	m, ids := f.Correction(in.Correction, &answer, tx.FeedbackID(), a.Category, rested)
	if m == nil {
		return nil, nil
	}
	created, err := tx.CreateMemory(ctx, m)
	if engram.ErrorCode(err) == engram.EINVALID {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ids = slices.Clone(ids)
	sort.Strings(ids)
	if err := tx.SupersedeMemories(ctx, ids, created.Memory.ID); err != nil {
		return nil, err
	}
	return &engram.Knowledge{MemoryID: created.Memory.ID, Superseded: append([]string{}, ids...)}, nil
}

// arms are what the recall's exploration left for the feedback to
// measure (see Arms). The features of the memory a probe chose are those
// its learning read when the recall injected it; otherwise it is read
// for them, and counts for nothing once deleted.
func (f *Feedback) arms(ctx context.Context, tx engram.FeedbackTx, rec *engram.RecallScores, l *learningTx) (Arms, error) {
	if rec == nil {
		return Arms{}, nil
	}
	a := Arms{HeldBack: rec.HeldBack, ProbeIn: rec.ProbeIn}
	if rec.Probe == "" {
		return a, nil
	}
	if a.Probe = l.features[rec.Probe]; a.Probe == nil {
		m, err := tx.FindMemory(ctx, rec.Probe)
		if engram.ErrorCode(err) == engram.ENOTFOUND {
			return a, nil
		}
		if err != nil {
			return a, err
		}
		a.Probe = m.Features()
	}
	return a, nil
}
