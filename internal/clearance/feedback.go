package clearance

import (
	"context"

	"github.com/engram-memory/engram"
)

// Feedback is the feedback service as a reader may use it: feedback on
// one memory is a write to it and its impact a read of it, so both are
// refused as guard refuses a write when the memory is above the reader's
// clearance (404 in omit mode, 403 in mask mode), before anything changes.
type Feedback struct {
	engram.FeedbackService
	Memories engram.MemoryService // the store's own, unfiltered
}

func (s Feedback) guardID(ctx context.Context, id string) error {
	if id == "" || engram.ReaderFromContext(ctx) == nil {
		return nil
	}
	m, err := s.Memories.FindMemoryByID(ctx, id)
	return guard(ctx, m, err)
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
