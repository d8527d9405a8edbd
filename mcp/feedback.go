package mcp

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
)

// feedbackArgs are POST /v1/feedback's fields; pointers where "absent" and
// "zero" differ, as there: a rating of 0 or an empty thumb is an error,
// not an omission.
type feedbackArgs struct {
	UserID         string  `json:"user_id,omitempty" jsonschema:"the end user this call is for: their memories and the shared ones; omit for shared only"`
	RecallID       string  `json:"recall_id,omitempty" jsonschema:"the recall whose memories the answer used (credits each of them)"`
	MemoryID       string  `json:"memory_id,omitempty" jsonschema:"or one memory"`
	InteractionID  string  `json:"interaction_id,omitempty" jsonschema:"or an answer recorded through the REST API"`
	Thumb          *string `json:"thumb,omitempty" jsonschema:"up: the memories helped; down: they misled"`
	Rating         *int    `json:"rating,omitempty" jsonschema:"instead of a thumb: 1 (bad) to 5 (good); 3 is neutral"`
	Reason         string  `json:"reason,omitempty" jsonschema:"why, in a few words"`
	Correction     *string `json:"correction,omitempty" jsonschema:"the answer the user wanted (with interaction_id only)"`
	Rater          string  `json:"rater,omitempty" jsonschema:"who judged, e.g. the user's id; one rater moves a memory at most a few times a day"`
	IdempotencyKey string  `json:"idempotency_key,omitempty" jsonschema:"a repeated key returns the first result and changes nothing"`
}

func (b *toolbox) addFeedback() {
	addTool(b, &sdk.Tool{
		Name: "feedback",
		Description: "Say whether recalled memories helped: thumb up or down, or a rating from 1 to 5, on a recall_id " +
			"(credits every memory that recall put in the context) or on one memory_id. Use it when the user confirms, " +
			"thanks for, rejects or corrects an answer that used recalled memories. Helpful memories rise, misleading ones sink.",
		Annotations: &sdk.ToolAnnotations{Title: "Feedback", DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, func(s *jsonschema.Schema) {
		enum(s, "thumb", engram.ThumbUp, engram.ThumbDown)
		between(s, "rating", 1, 5)
	}, b.s.feedback)
}

func (s *Server) feedback(ctx context.Context, a *feedbackArgs) (*engram.FeedbackResult, error) {
	in := engram.FeedbackInput{InteractionID: a.InteractionID, RecallID: a.RecallID, MemoryID: a.MemoryID,
		Reason: a.Reason, Rater: a.Rater, IdempotencyKey: a.IdempotencyKey}
	if a.Thumb != nil {
		if *a.Thumb == "" {
			return nil, engram.Errorf(engram.EINVALID, "thumb must be up or down")
		}
		in.Thumb = *a.Thumb
	}
	if a.Rating != nil {
		if *a.Rating < 1 || *a.Rating > 5 {
			return nil, engram.Errorf(engram.EINVALID, "rating must be an integer from 1 to 5")
		}
		in.Rating = *a.Rating
	}
	if a.Correction != nil {
		if *a.Correction == "" {
			return nil, engram.Errorf(engram.EINVALID, "correction must not be empty; omit it instead")
		}
		in.Correction = *a.Correction
	}
	res, err := s.cfg.Feedback.SubmitFeedback(ctx, in)
	if err != nil {
		return nil, err
	}
	if res.Credited == nil {
		res.Credited = []engram.CreditedMemory{}
	}
	if res.Pairs == nil {
		res.Pairs = []string{}
	}
	return res, nil
}
