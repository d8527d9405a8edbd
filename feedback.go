package engram

import (
	"context"
	"time"
)

// Message is one chat message of a prompt.
type Message struct {
	Role    string `json:"role"` // system, user, assistant or tool
	Content string `json:"content"`
}

// Interaction is one answer a chat product gave.
type Interaction struct {
	ID        string    `json:"interaction_id"`
	Prompt    string    `json:"prompt"`             // the prompt as text (messages rendered "role: content")
	Messages  []Message `json:"messages,omitempty"` // the prompt as chat messages, when given so
	Response  string    `json:"response"`
	RecallID  string    `json:"recall_id,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	TurnID    string    `json:"turn_id,omitempty"`
	Model     string    `json:"model,omitempty"`
	UserID    string    `json:"user_id,omitempty"` // the end user the answer was for
	// GroupKey gathers regenerations: answers to the same turn (turn id,
	// else the normalised prompt within the session).
	GroupKey  string    `json:"group_key"`
	CreatedAt time.Time `json:"created_at"`
}

// Thumbs.
const (
	ThumbUp   = "up"
	ThumbDown = "down"
)

// FeedbackInput is one thumb or rating on exactly one target.
type FeedbackInput struct {
	InteractionID  string `json:"interaction_id,omitempty"`
	RecallID       string `json:"recall_id,omitempty"`
	MemoryID       string `json:"memory_id,omitempty"`
	Thumb          string `json:"thumb,omitempty"`  // up or down
	Rating         int    `json:"rating,omitempty"` // 1–5; 3 is neutral
	Reason         string `json:"reason,omitempty"`
	Correction     string `json:"correction,omitempty"` // the answer the user wanted
	Rater          string `json:"rater,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// UserID is the end user giving the feedback (docs/users.md); "" the
	// user of the rated recall.
	UserID string `json:"user_id,omitempty"`
}

// Signal maps a thumb or rating to [-1, 1]: up +1, down −1, rating
// (r − 3) / 2, so 3 stars is neutral.
func (f FeedbackInput) Signal() float64 {
	switch {
	case f.Thumb == ThumbUp:
		return 1
	case f.Thumb == ThumbDown:
		return -1
	case f.Rating >= 1 && f.Rating <= 5:
		return float64(f.Rating-3) / 2
	}
	return 0
}

// CreditedMemory is a memory after one feedback was credited to it.
type CreditedMemory struct {
	ID            string  `json:"id"`
	Version       int64   `json:"version"`
	Weight        float64 `json:"weight"` // the memory's share of the signal: its score over the recall's best
	Reward        float64 `json:"reward"`
	Confidence    float64 `json:"confidence"`
	Stability     float64 `json:"stability"`
	NeedsRevision bool    `json:"needs_revision"`
	UpCount       int64   `json:"up_count"`
	DownCount     int64   `json:"down_count"`
	// Capped is true when the rater already moved this memory as far as
	// one rater may within the window: recorded, not applied.
	Capped bool `json:"capped,omitempty"`
}

// CreditedReflection is a reflection after one feedback on a recall that
// injected it.
type CreditedReflection struct {
	ID        string  `json:"id"`
	Weight    float64 `json:"weight"`
	UpCount   int64   `json:"up_count"`
	DownCount int64   `json:"down_count"`
	Capped    bool    `json:"capped,omitempty"`
}

// FeedbackResult says what a feedback did.
type FeedbackResult struct {
	FeedbackID  string               `json:"feedback_id"`
	Signal      float64              `json:"signal"`
	Credited    []CreditedMemory     `json:"credited"`
	Reflections []CreditedReflection `json:"reflections,omitempty"` // injected reflections the feedback counted on
	Pairs       []string             `json:"pairs"`                 // ids of the preference pairs it completed
	// Knowledge is what a correction became: the new memory and the
	// memories it superseded.
	Knowledge *Knowledge `json:"knowledge,omitempty"`
	// Replayed is true when the idempotency key was seen before: this is
	// the first submission's result and nothing was applied again.
	Replayed bool `json:"replayed,omitempty"`
}

// States of a feedback acknowledged before it was applied.
const (
	FeedbackPending = "pending" // acknowledged and durable, not yet credited
	FeedbackApplied = "applied" // credited: Result holds what it did
)

// FeedbackStatus is the answer to an asynchronous feedback (POST
// /v1/feedback with Prefer: respond-async) and to GET /v1/feedback/{id}.
type FeedbackStatus struct {
	FeedbackID string   `json:"feedback_id"`
	Status     string   `json:"status"`  // pending or applied
	Credits    []string `json:"credits"` // ids of the memories and reflections it credits
	// Result is what the feedback did, once applied.
	Result *FeedbackResult `json:"result,omitempty"`
	// Replayed is true when the idempotency key was seen before: this is
	// the first submission's feedback and nothing was queued again.
	Replayed bool `json:"replayed,omitempty"`
}

// Pair kinds.
const (
	PairRegeneration = "regeneration"
	PairCorrection   = "correction"
	PairRating       = "rating"
)

// MemoryRef is a memory version that was in a prompt's context.
type MemoryRef struct {
	ID      string `json:"id"`
	Version int64  `json:"version"`
}

// Pair is a preference pair with its provenance.
type Pair struct {
	ID       string    `json:"id"`
	Kind     string    `json:"kind"`
	Prompt   string    `json:"prompt"`
	Messages []Message `json:"messages,omitempty"`
	Chosen   string    `json:"chosen"`
	Rejected string    `json:"rejected"`
	Margin   float64   `json:"margin"` // signal of chosen − signal of rejected, in (0, 2]
	Category string    `json:"category,omitempty"`
	UserID   string    `json:"user_id,omitempty"` // the end user whose feedback made the pair

	ChosenInteractionID   string      `json:"chosen_interaction_id,omitempty"` // empty for a correction
	RejectedInteractionID string      `json:"rejected_interaction_id"`
	FeedbackIDs           []string    `json:"feedback_ids"`
	ChosenMemories        []MemoryRef `json:"chosen_memories"`
	RejectedMemories      []MemoryRef `json:"rejected_memories"`
	CreatedAt             time.Time   `json:"created_at"`
}

// Unpaired is a lone judged answer (KTO-style data).
type Unpaired struct {
	Prompt     string    `json:"prompt"`
	Messages   []Message `json:"messages,omitempty"`
	Completion string    `json:"completion"`
	Label      bool      `json:"label"`
	CreatedAt  time.Time `json:"created_at"`
	// Memories are what the judged answer's recall injected (not
	// exported: the clearance reads their levels).
	Memories []MemoryRef `json:"-"`
}

// PairFilter selects pairs (or unpaired examples) to export.
type PairFilter struct {
	Since, Until *time.Time
	Category     *string
	// UserID keeps exactly this end user's pairs and judged answers ("" the
	// shared ones); nil keeps every user's (an operator's export), as
	// MemoryFilter.UserID does for a list of memories.
	UserID    *string
	MinMargin float64
	Limit     int
	Cursor    string
}

// FeedbackService records interactions and feedback for the tenant in
// the context, credits memories and builds preference pairs.
type FeedbackService interface {
	// CreateInteraction stores an answer. EINVALID, ENOTFOUND (recall).
	CreateInteraction(ctx context.Context, in *Interaction) (*Interaction, error)
	// SubmitFeedback applies one feedback. EINVALID, ENOTFOUND (target).
	SubmitFeedback(ctx context.Context, in FeedbackInput) (*FeedbackResult, error)
	// QueueFeedback validates one feedback as SubmitFeedback does, and
	// returns once it is durably queued, to be applied shortly after by
	// the same workflow. EINVALID, ENOTFOUND (target).
	QueueFeedback(ctx context.Context, in FeedbackInput) (*FeedbackStatus, error)
	// FeedbackStatus reports a feedback: pending, or applied with its
	// result. ENOTFOUND outside the tenant.
	FeedbackStatus(ctx context.Context, id string) (*FeedbackStatus, error)
	// EachPair calls fn for each pair matching f, oldest first, and
	// returns the cursor after the last one ("" when none follow).
	EachPair(ctx context.Context, f PairFilter, fn func(*Pair) error) (string, error)
	// EachUnpaired calls fn for each judged interaction matching f.
	EachUnpaired(ctx context.Context, f PairFilter, fn func(*Unpaired) error) (string, error)
	// Impact estimates a memory's effect on the ratings of the answers it
	// was injected into. ENOTFOUND for a memory outside the tenant.
	Impact(ctx context.Context, memoryID string) (*Impact, error)
}

// Judgement is the latest feedback on one answer, as the pair rule sees it.
type Judgement struct {
	Signal float64 // in [-1, 1]
	Rating bool    // a 1–5 rating rather than a thumb
}

// Knowledge is the L2 memory a user's correction became, and the
// memories of the corrected answer it superseded (now needs_revision,
// with superseded_by naming it).
type Knowledge struct {
	MemoryID   string   `json:"memory_id"`
	Superseded []string `json:"superseded"`
}

// Rested is a memory a judged answer rested on, with its share of it.
type Rested struct {
	Memory *Memory
	Share  float64
}

// Outcomes sums the signals of some recalls.
type Outcomes struct {
	N   int64   `json:"n"`
	Sum float64 `json:"sum"`
	Sq  float64 `json:"sum_sq"`
}

// Mean is the mean signal, 0 when there is none.
func (o Outcomes) Mean() float64 {
	if o.N == 0 {
		return 0
	}
	return o.Sum / float64(o.N)
}

// Helpfulness is the evidence feedback left on one memory across every
// recall it was injected into (or, for the tenant's totals, every judged
// recall). The store keeps it; the learning package weighs it.
type Helpfulness struct {
	// Good and Bad are the weighted evidence of good and bad answers.
	Good float64 `json:"good"`
	Bad  float64 `json:"bad"`
	// With are the signals of judged recalls that injected the memory,
	// Without those of judged recalls where exploration held it back.
	With    Outcomes `json:"with"`
	Without Outcomes `json:"without"`
}

// HelpEvidence is what the store knows for weighing one memory's
// helpfulness: its own evidence, its origin's (every memory written the
// same way, see Memory.Origin), every memory's of the tenant (AllOrigins),
// the tenant's main origin's (the origin whose memories hold the most
// evidence, good and bad) and the tenant's judged answers.
type HelpEvidence struct {
	Memory  Helpfulness `json:"memory"`
	Origin  Helpfulness `json:"origin"`
	Origins Helpfulness `json:"origins"`
	Main    Helpfulness `json:"main_origin"`
	Answers Helpfulness `json:"answers"`
	// Features is the evidence of each feature of the memory (see
	// Memory.Features) that has any, by feature key.
	Features map[string]Helpfulness `json:"features,omitempty"`
	// Kinds is the evidence of every memory's features (AllFeatures),
	// the reference a feature's is compared with.
	Kinds Helpfulness `json:"kinds"`
	// OriginKey and FeatureKeys are the memory's origin key and feature
	// keys (Memory.Origin, Features) the evidence was read by, when the
	// store gives them: a feedback's learning then need not compute them
	// again.
	OriginKey   string   `json:"-"`
	FeatureKeys []string `json:"-"`
}

// Judged is a memory one feedback judges: its rank among the recall's
// memories (0 for the best score) and the evidence known before this
// feedback.
type Judged struct {
	Rank int
	// Corrected is set when a user's correction superseded the memory.
	Corrected bool
	HelpEvidence
}

// Evidence is what one feedback adds to a judged memory's evidence and
// to its origin's.
type Evidence struct {
	Memory, Origin float64
	// Kind is what it adds to each of the memory's features (see
	// Memory.Features) and to AllFeatures.
	Kind float64
}

// Reputation is what the store knows of one rater: how often its votes
// agreed or disagreed with other raters' evidence, and how many it cast.
type Reputation struct {
	Agree    float64 `json:"agree"`
	Disagree float64 `json:"disagree"`
	Votes    int64   `json:"votes"`
}

// RaterReputation is one rater's reputation in a tenant.
type RaterReputation struct {
	Rater string `json:"rater"`
	Reputation
	UpdatedAt time.Time `json:"updated_at"`
}

// Impact is a memory's measured effect on the ratings of the answers it
// was injected into (GET /v1/memories/{id}/impact).
type Impact struct {
	MemoryID string `json:"memory_id"`
	// With and Without are the judged recalls that injected the memory
	// and that exploration held it back from: count and mean signal.
	With    ImpactArm `json:"with"`
	Without ImpactArm `json:"without"`
	// Effect is with − without, in signal units ([-2, 2]), with a 95%
	// confidence interval; nil when either arm has no judged recall.
	Effect *float64  `json:"effect"`
	CI     []float64 `json:"ci95"`
	// Helpfulness is the factor recall multiplies the memory's score by,
	// with its evidence.
	Helpfulness float64 `json:"helpfulness"`
	Good        float64 `json:"help_good"`
	Bad         float64 `json:"help_bad"`
	// OriginFactor is the part of Helpfulness the memory's origin earned
	// (see Memory.Origin), from the evidence of all its memories.
	OriginFactor float64 `json:"origin_factor"`
	OriginGood   float64 `json:"origin_good"`
	OriginBad    float64 `json:"origin_bad"`
	// FeatureFactor is the part of Helpfulness the memory's features
	// earned (see Memory.Features), with Features the three that moved it
	// most.
	FeatureFactor float64         `json:"feature_factor"`
	Features      []FeatureWeight `json:"features,omitempty"`
}

// ImpactArm is one side of an impact estimate.
type ImpactArm struct {
	N    int64   `json:"n"`
	Mean float64 `json:"mean_signal"`
}
