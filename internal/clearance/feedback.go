package clearance

import (
	"context"
	"slices"

	"github.com/engram-memory/engram"
)

// Feedback is the feedback service as a reader may use it: feedback on
// one memory is a write to it and its impact a read of it, so both are
// refused as guard refuses a write when the memory is above the reader's
// clearance (404 in omit mode, 403 in mask mode), before anything changes;
// an export of pairs leaves out those above it (EachPair).
type Feedback struct {
	engram.FeedbackService
	Memories engram.MemoryService // the store's own, unfiltered
	Levels   Levels               // memories' security levels by id
}

func (s Feedback) guardID(ctx context.Context, id string) error {
	if id == "" { // a feedback on an answer or a recall
		return nil
	}
	return guardID(ctx, s.Memories, id)
}

// SubmitFeedback implements engram.FeedbackService.
func (s Feedback) SubmitFeedback(ctx context.Context, in engram.FeedbackInput) (*engram.FeedbackResult, error) {
	if err := s.guardID(ctx, in.MemoryID); err != nil {
		return nil, err
	}
	return s.FeedbackService.SubmitFeedback(ctx, in)
}

// QueueFeedback implements engram.FeedbackService.
func (s Feedback) QueueFeedback(ctx context.Context, in engram.FeedbackInput) (*engram.FeedbackStatus, error) {
	if err := s.guardID(ctx, in.MemoryID); err != nil {
		return nil, err
	}
	return s.FeedbackService.QueueFeedback(ctx, in)
}

// Impact implements engram.FeedbackService.
func (s Feedback) Impact(ctx context.Context, memoryID string) (*engram.Impact, error) {
	if err := s.guardID(ctx, memoryID); err != nil {
		return nil, err
	}
	return s.FeedbackService.Impact(ctx, memoryID)
}

// EachPair implements engram.FeedbackService: a pair quotes answers that
// rested on its chosen and rejected memories, so it is left out (and
// counted as withheld) when one of them is above the reader's clearance,
// in either withhold mode; a page may then hold fewer pairs than its
// limit.
func (s Feedback) EachPair(ctx context.Context, f engram.PairFilter, fn func(*engram.Pair) error) (string, error) {
	see := s.seer(ctx)
	return s.FeedbackService.EachPair(ctx, f, func(p *engram.Pair) error {
		ok, err := see(slices.Concat(p.ChosenMemories, p.RejectedMemories))
		if err != nil || !ok {
			return err
		}
		return fn(p)
	})
}

// EachUnpaired implements engram.FeedbackService, as EachPair, by the
// memories the judged answer's recall injected.
func (s Feedback) EachUnpaired(ctx context.Context, f engram.PairFilter, fn func(*engram.Unpaired) error) (string, error) {
	see := s.seer(ctx)
	return s.FeedbackService.EachUnpaired(ctx, f, func(u *engram.Unpaired) error {
		ok, err := see(u.Memories)
		if err != nil || !ok {
			return err
		}
		return fn(u)
	})
}

// seer returns whether the reader in ctx may read every memory of refs
// in clear, counting a refusal as withheld; it remembers the levels it
// read, since an export names the same memories again and again.
func (s Feedback) seer(ctx context.Context) func([]engram.MemoryRef) (bool, error) {
	r := engram.ReaderFromContext(ctx)
	if r == nil || engram.Cleared(r.Clearance, engram.SecuritySecret) {
		return func([]engram.MemoryRef) (bool, error) { return true, nil }
	}
	levels := map[string]string{}
	return func(refs []engram.MemoryRef) (bool, error) {
		var missing []string
		for _, m := range refs {
			if _, ok := levels[m.ID]; !ok {
				missing = append(missing, m.ID)
			}
		}
		if len(missing) > 0 {
			got, err := s.Levels(ctx, missing)
			if err != nil {
				return false, err
			}
			for _, id := range missing {
				levels[id] = got[id] // "" for a memory gone: no level to hold back
			}
		}
		for _, m := range refs {
			if l := levels[m.ID]; l != "" && !engram.Cleared(r.Clearance, l) {
				r.CountWithheld()
				return false, nil
			}
		}
		return true, nil
	}
}
