package store

import (
	"context"

	"github.com/engram-memory/engram"
)

// GroupFeedback is one feedback of SubmitFeedbackGroup: its context, the
// recall it names and its rater (RunFeedback's recallID and rater) and
// its workflow.
type GroupFeedback struct {
	Ctx      context.Context
	RecallID string
	Rater    string
	Fn       engram.FeedbackFunc
}

// SubmitFeedbackGroup writes fbs (of the tenant of the first one's
// context) as one group, in order, as feedbackGroups does with
// feedbacks that arrive together, and returns each one's answer; a
// feedback that lost a race runs again in a group of its own.
func (db *DB) SubmitFeedbackGroup(fbs []GroupFeedback) ([]*engram.FeedbackResult, []error) {
	res, errs := make([]*engram.FeedbackResult, len(fbs)), make([]error, len(fbs))
	tenant, err := tenantOf(fbs[0].Ctx)
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return res, errs
	}
	batch := make([]*feedbackMember, len(fbs))
	for i, fb := range fbs {
		claimed, rec, err := db.readyRecall(fb.Ctx, tenant, fb.RecallID)
		if err != nil {
			errs[i] = err
		}
		batch[i] = &feedbackMember{ctx: fb.Ctx, recallID: fb.RecallID, rater: fb.Rater, fn: fb.Fn, claimed: claimed, recall: rec, done: make(chan struct{})}
	}
	for retry := db.feedbacks.commit(tenant, batch); len(retry) > 0; {
		retry = db.feedbacks.commit(tenant, retry)
	}
	for i, m := range batch {
		if errs[i] == nil {
			res[i], errs[i] = m.res, m.err
		}
	}
	return res, errs
}
