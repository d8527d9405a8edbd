package learning

import (
	"context"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/engram-memory/engram"
)

// FeedbackStore is what feedback needs from the store. RunFeedback runs
// one feedback's workflow in a write transaction of the tenant in ctx and
// returns its answer once committed: the workflow (see Feedback) decides,
// through the transaction-level steps of engram.FeedbackTx; the store
// keeps them atomic, and may run the workflow again after a lost race.
// recallID is the recall the feedback names directly, if any, which the
// store makes ready first (a recall still queued for writing, say);
// rater is the rater the workflow credits as, for the store to read what
// it holds of that rater once for a group of feedbacks.
type FeedbackStore interface {
	CreateInteraction(ctx context.Context, in *engram.Interaction) (*engram.Interaction, error)
	RunFeedback(ctx context.Context, recallID, rater string, fn engram.FeedbackFunc) (*engram.FeedbackResult, error)
	// QueueFeedback runs plan in a write transaction of the tenant in ctx
	// and, unless plan found the feedback already applied, commits in it
	// the pending feedback (in, as validated) before it returns; a
	// repeated idempotency key returns the first answer. The store's
	// applier (StartFeedbackApplier) applies it later through
	// RunFeedback's group machinery, with the workflow build returns.
	QueueFeedback(ctx context.Context, recallID string, in engram.FeedbackInput, plan engram.FeedbackPlanFunc) (*engram.FeedbackStatus, error)
	// FindFeedbackStatus reports a feedback of the tenant in ctx, pending
	// or applied. ENOTFOUND otherwise.
	FindFeedbackStatus(ctx context.Context, id string) (*engram.FeedbackStatus, error)
	// StartFeedbackApplier starts, once per store, the applier of pending
	// feedback: build turns a queued input into its workflow.
	// applied runs after each one's commit, as SubmitFeedback's own
	// steps after RunFeedback.
	StartFeedbackApplier(build func(engram.FeedbackInput) engram.FeedbackFunc, applied func(context.Context, *engram.FeedbackResult) error)
	EachPair(ctx context.Context, f engram.PairFilter, fn func(*engram.Pair) error) (string, error)
	EachUnpaired(ctx context.Context, f engram.PairFilter, fn func(*engram.Unpaired) error) (string, error)
	MemoryHelpfulness(ctx context.Context, id string) (engram.HelpEvidence, error)
	// FindFeatureEvidence returns the evidence of the tenant's limit
	// features with the most, by feature key, and of all features.
	FindFeatureEvidence(ctx context.Context, limit int) (map[string]engram.Helpfulness, engram.Helpfulness, error)
}

// Feedback implements engram.FeedbackService: it validates, and runs the
// feedback workflow of DESIGN §4 (see workflow) in the store's
// transaction. Every decision of that workflow is made here, in learning:
// the store only reads, writes and keeps the writes atomic.
type Feedback struct {
	FeedbackStore
	scorer *Scorer
	cfg    engram.FeedbackConfig
}

var _ engram.FeedbackService = (*Feedback)(nil)

// NewFeedback returns the feedback service, and starts the store's
// applier of feedback acknowledged before it was applied (the pending
// feedback a restart finds included).
func NewFeedback(st FeedbackStore, scorer *Scorer, cfg engram.FeedbackConfig) *Feedback {
	f := &Feedback{FeedbackStore: st, scorer: scorer, cfg: cfg}
	if st != nil {
		st.StartFeedbackApplier(f.workflow, f.afterFeedback)
	}
	return f
}

var roles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true}

// CreateInteraction validates and stores an answer: a prompt as text or
// as chat messages (then rendered "role: content" per line as its text),
// and a non-empty response.
func (f *Feedback) CreateInteraction(ctx context.Context, in *engram.Interaction) (*engram.Interaction, error) {
	if len(in.Messages) > 0 {
		if in.Prompt != "" {
			return in, engram.Errorf(engram.EINVALID, "prompt is either text or messages, not both")
		}
		lines := make([]string, len(in.Messages))
		for i, m := range in.Messages {
			if !roles[m.Role] {
				return in, engram.Errorf(engram.EINVALID, "prompt[%d].role must be system, developer, user, assistant or tool", i)
			}
			if strings.TrimSpace(m.Content) == "" {
				return in, engram.Errorf(engram.EINVALID, "prompt[%d].content must not be empty", i)
			}
			lines[i] = m.Role + ": " + m.Content
		}
		in.Prompt = strings.Join(lines, "\n")
	}
	for name, v := range map[string]string{"prompt": in.Prompt, "response": in.Response} {
		if strings.TrimSpace(v) == "" {
			return in, engram.Errorf(engram.EINVALID, "%s must not be empty", name)
		}
		if n := utf8.RuneCountInString(v); n > f.cfg.MaxTextChars {
			return nil, engram.Errorf(engram.ETOOLARGE, "%s has %d characters; the limit is %d", name, n, f.cfg.MaxTextChars)
		}
	}
	for name, v := range map[string]string{"session_id": in.SessionID, "turn_id": in.TurnID, "model": in.Model} {
		if len(v) > 256 {
			return in, engram.Errorf(engram.EINVALID, "%s must be at most 256 bytes", name)
		}
	}
	return f.FeedbackStore.CreateInteraction(ctx, in)
}

// SubmitFeedback validates one feedback and applies it.
func (f *Feedback) SubmitFeedback(ctx context.Context, in engram.FeedbackInput) (*engram.FeedbackResult, error) {
	in, err := f.validate(ctx, in)
	if err != nil {
		return nil, err
	}
	res, err := f.FeedbackStore.RunFeedback(ctx, in.RecallID, in.Rater, f.workflow(in))
	if err != nil {
		return nil, err
	}
	return res, f.afterFeedback(ctx, res)
}

// afterFeedback is what follows a feedback's commit, applied at once or
// by the applier: a correction's links to what it corrected.
func (f *Feedback) afterFeedback(ctx context.Context, res *engram.FeedbackResult) error {
	if res == nil || res.Knowledge == nil {
		return nil
	}
	return f.linkCorrection(ctx, res.Knowledge)
}

// QueueFeedback validates one feedback as SubmitFeedback does, reads its
// target (ENOTFOUND as SubmitFeedback) and returns once the store has
// committed it as pending, with the memories it will credit; the store's
// applier then runs the same workflow as SubmitFeedback. The rater's cap
// is evaluated when it is applied, not when it is queued.
func (f *Feedback) QueueFeedback(ctx context.Context, in engram.FeedbackInput) (*engram.FeedbackStatus, error) {
	in, err := f.validate(ctx, in)
	if err != nil {
		return nil, err
	}
	return f.FeedbackStore.QueueFeedback(ctx, in.RecallID, in, func(ctx context.Context, tx engram.FeedbackTx) ([]string, *engram.FeedbackResult, error) {
		if prior, err := findPrior(ctx, tx, in.IdempotencyKey); prior != nil || err != nil {
			return nil, prior, err
		}
		t := in
		_, _, shares, _, err := f.target(ctx, tx, &t)
		if err != nil {
			return nil, nil, err
		}
		credits := []string{}
		if in.Signal() != 0 {
			for id, w := range shares {
				if w > 0 {
					credits = append(credits, id)
				}
			}
		}
		sort.Strings(credits)
		return credits, nil, nil
	})
}

// FeedbackStatus implements engram.FeedbackService.
func (f *Feedback) FeedbackStatus(ctx context.Context, id string) (*engram.FeedbackStatus, error) {
	return f.FeedbackStore.FindFeedbackStatus(ctx, id)
}

// validate checks one feedback and scopes its rater by the API key that
// sent it ("<key id>/<rater>"), so one client's votes are capped together
// unless it names its raters, and no client can spend another's allowance.
func (f *Feedback) validate(ctx context.Context, in engram.FeedbackInput) (engram.FeedbackInput, error) {
	targets := 0
	for _, t := range []string{in.InteractionID, in.RecallID, in.MemoryID} {
		if t != "" {
			targets++
		}
	}
	switch {
	case targets != 1:
		return in, engram.Errorf(engram.EINVALID, "give exactly one of interaction_id, recall_id, memory_id")
	case in.Thumb != "" && in.Rating != 0:
		return in, engram.Errorf(engram.EINVALID, "give a thumb or a rating, not both")
	case in.Thumb == "" && in.Rating == 0:
		return in, engram.Errorf(engram.EINVALID, "give a thumb (up or down) or a rating (1-5)")
	case in.Thumb != "" && in.Thumb != engram.ThumbUp && in.Thumb != engram.ThumbDown:
		return in, engram.Errorf(engram.EINVALID, "thumb must be up or down")
	case in.Thumb == "" && (in.Rating < 1 || in.Rating > 5):
		return in, engram.Errorf(engram.EINVALID, "rating must be an integer from 1 to 5")
	case in.Correction != "" && in.InteractionID == "":
		return in, engram.Errorf(engram.EINVALID, "a correction needs the interaction_id of the answer it corrects")
	}
	for name, v := range map[string]string{"reason": in.Reason, "correction": in.Correction} {
		if n := utf8.RuneCountInString(v); n > f.cfg.MaxTextChars {
			return in, engram.Errorf(engram.ETOOLARGE, "%s has %d characters; the limit is %d", name, n, f.cfg.MaxTextChars)
		}
	}
	for name, v := range map[string]string{"rater": in.Rater, "idempotency_key": in.IdempotencyKey} {
		if len(v) > 256 {
			return in, engram.Errorf(engram.EINVALID, "%s must be at most 256 bytes", name)
		}
	}
	// The cap counts per API key and rater: a client that invents a new
	// rater name per vote still moves a memory at most RaterCap times per
	// rater it names, and every name it uses is recorded as its own.
	in.Rater = engram.ActorFromContext(ctx).KeyID + "/" + in.Rater
	return in, nil
}

// linkCorrection links the memory a correction became to each memory it
// superseded, "corrects" (engram.RelCorrects), once the feedback is
// stored, when the store keeps links. Linking again (a replayed
// feedback) changes nothing; a superseded memory deleted meanwhile is
// skipped.
func (f *Feedback) linkCorrection(ctx context.Context, k *engram.Knowledge) error {
	links, ok := f.FeedbackStore.(engram.LinkService)
	if !ok {
		return nil
	}
	for _, id := range k.Superseded {
		_, err := links.CreateLink(ctx, engram.Link{From: k.MemoryID, To: id, Relation: engram.RelCorrects})
		if c := engram.ErrorCode(err); c != "" && c != engram.ENOTFOUND {
			return err
		}
	}
	return nil
}

// Impact implements engram.FeedbackService: the mean signal of the judged
// recalls that injected the memory and of those that exploration held it
// back from, their difference with a normal 95% interval (once each arm
// has a judged recall), and the helpfulness factor recall applies.
func (f *Feedback) Impact(ctx context.Context, id string) (*engram.Impact, error) {
	e, err := f.FeedbackStore.MemoryHelpfulness(ctx, id)
	if err != nil {
		return nil, err
	}
	h := e.Memory
	out := &engram.Impact{MemoryID: id, With: engram.ImpactArm{N: h.With.N, Mean: h.With.Mean()},
		Without: engram.ImpactArm{N: h.Without.N, Mean: h.Without.Mean()}, Good: h.Good, Bad: h.Bad,
		OriginGood: e.Origin.Good, OriginBad: e.Origin.Bad}
	out.Helpfulness, out.OriginFactor, _ = f.scorer.Helpful(e)
	out.FeatureFactor, out.Features = f.scorer.Features(e)
	if effect, lo, hi, ok := impact(h, 1); ok {
		out.Effect, out.CI = &effect, []float64{lo, hi}
	}
	return out, nil
}
