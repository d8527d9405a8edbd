package engram

import (
	"context"
	"time"
)

// FeedbackTx is the store's side of one feedback: the reads and writes of
// one transaction that the feedback workflow (the learning package)
// composes, in the way a service composes transaction-level functions.
//
// Who decides what: the workflow decides everything a feedback means —
// each memory's share, how far a credit moves it, the rater's cap and
// weight, the helpfulness evidence and reputation it adds, which answers
// pair and by what margin, what a correction becomes and supersedes. The
// store decides nothing: it reads and writes rows, keeps the feedback's
// writes atomic (all of them commit or none do), takes its locks in one
// order, numbers versions and records each change as an event. Every
// value a method writes is one the workflow computed, or a count it asked
// for; no method applies a rule of its own.
//
// The store runs a feedback's workflow (a FeedbackFunc) in one write
// transaction and hands it a FeedbackTx, valid only inside that call and
// not safe for concurrent use. The transaction may hold other feedbacks of
// the tenant, each in its own savepoint: the reads see what those earlier
// in it wrote, as if they had committed first, and a workflow that lost a
// race is run again from its start, so it keeps no state between runs.
type FeedbackTx interface {
	// FeedbackID is the id the feedback will be stored under.
	FeedbackID() string
	// Now is the feedback's time, read from the store's clock once when
	// the feedback's turn in the transaction began.
	Now() time.Time

	// FindFeedbackResult returns the result stored with the tenant's
	// feedback of idempotency key. ENOTFOUND when there is none.
	FindFeedbackResult(ctx context.Context, key string) (*FeedbackResult, error)
	// FindAnswer returns an interaction with its route's category and
	// latest judgement. ENOTFOUND.
	FindAnswer(ctx context.Context, id string) (*Answer, error)
	// FindRecallScores returns what a stored recall tells feedback.
	// ENOTFOUND.
	FindRecallScores(ctx context.Context, id string) (*RecallScores, error)
	// FindMemory returns one memory of the tenant, content included.
	// ENOTFOUND.
	FindMemory(ctx context.Context, id string) (*Memory, error)

	// LockMemories reads and locks the tenant's memories of ids, in id
	// order (the one lock order of every writer), tombstoned ones
	// included; ids of no memory of the tenant are left out. Only the
	// fields a credit reads are filled: those it moves and those its origin
	// and features are read from (content, tags, key, category), no data,
	// summary or context.
	LockMemories(ctx context.Context, ids []string) ([]*Memory, error)
	// CountCredits counts, by memory (or reflection) id, the credits rater
	// had applied to ids since the given time.
	CountCredits(ctx context.Context, rater string, ids []string, since time.Time) (map[string]int64, error)
	// WriteCredits writes what one feedback did to the memories it
	// credited: each moved memory (one LockMemories returned, changed by
	// the workflow) as its next version, stamped with the store's time,
	// with a delta event of what changed; and the credit rows, applied or
	// capped. Moved memories get their new Version and UpdatedAt.
	WriteCredits(ctx context.Context, w CreditWrite) error

	// FindReputation returns rater's reputation in the tenant.
	FindReputation(ctx context.Context, rater string) (Reputation, error)
	// FindHelpEvidence returns, by id, the helpfulness evidence of mems
	// (see HelpEvidence).
	FindHelpEvidence(ctx context.Context, mems []*Memory) (map[string]HelpEvidence, error)
	// AddLearning adds help (by memory id or origin key, see
	// AnswersKey, AllOrigins) to the helpfulness evidence and rep to rater's
	// reputation. The store sums what the feedbacks of one transaction
	// add and writes the sums once, at its end; the reads above see them.
	AddLearning(help map[string]Helpfulness, rater string, rep Reputation)

	// LockReflection reads and locks one reflection of the tenant.
	// ENOTFOUND.
	LockReflection(ctx context.Context, id string) (*Reflection, error)
	// UpdateReflectionVotes sets a reflection's up and down counts.
	UpdateReflectionVotes(ctx context.Context, id string, up, down int64) error

	// LockAnswers locks the newest limit answers of a regeneration group
	// (Interaction.GroupKey), in one order, so that two answers judged at
	// once see each other's judgements.
	LockAnswers(ctx context.Context, groupKey string, limit int) error
	// UpdateJudgement records an answer's latest judgement and the
	// feedback that made it.
	UpdateJudgement(ctx context.Context, interactionID string, j Judgement, feedbackID string) error
	// FindJudgedAnswers returns the newest limit judged answers of a
	// regeneration group other than except, newest first.
	FindJudgedAnswers(ctx context.Context, groupKey, except string, limit int) ([]*Answer, error)
	// SavePair stores p under dedupeKey unless a pair of the tenant holds
	// that key already (false); the store gives it its id.
	SavePair(ctx context.Context, p *Pair, dedupeKey string) (bool, error)

	// CreateMemory stores a memory (its defaults applied) with its create
	// event, or returns the live memory that already says the same
	// (Deduplicated). EINVALID when it cannot be a valid memory.
	CreateMemory(ctx context.Context, m *Memory) (*CreateResult, error)
	// SupersedeMemories marks each live memory of ids needs_revision with
	// superseded_by naming by, one version and event each; one already so
	// marked is left alone.
	SupersedeMemories(ctx context.Context, ids []string, by string) error

	// SaveFeedback stores the feedback (in: its input, RecallID the recall
	// it was credited through) with its result, under FeedbackID at Now.
	SaveFeedback(ctx context.Context, in FeedbackInput, res *FeedbackResult) error
}

// FeedbackFunc is one feedback's workflow, run by the store inside its
// transaction: what it returns is the feedback's answer, once committed.
type FeedbackFunc func(ctx context.Context, tx FeedbackTx) (*FeedbackResult, error)

// FeedbackPlanFunc is what a feedback acknowledged before it is applied
// (Prefer: respond-async) decides up front, run by the store in the
// transaction that queues it: the memories it will credit, or the result
// already stored under its idempotency key (then nothing is queued).
// It reads through tx only; its errors (ENOTFOUND for its target) are
// the post's answer.
type FeedbackPlanFunc func(ctx context.Context, tx FeedbackTx) (credits []string, prior *FeedbackResult, err error)

// Answer is an interaction as feedback reads it: the answer, the category
// of its recall's top routed domain ("" without one), and its latest
// judgement (nil before any).
type Answer struct {
	Interaction
	Category       string
	Last           *Judgement
	LastFeedbackID string
}

// RecallScores is what a stored recall tells feedback: its query, the
// score of each item it injected (memories and reflections, by id), the
// memory versions it injected, in its order, the memory exploration
// held back ("" when none) and the items its breakdown marked pinned
// context (ScoreBreakdown.Pinned), which the store reports and the
// feedback workflow weighs.
type RecallScores struct {
	// UserID is the end user the recall was made for ("" shared).
	UserID   string
	Query    string
	Scores   map[string]float64
	Injected []MemoryRef
	HeldBack string
	Pinned   map[string]bool
	// Probe is the memory a kind probe chose ("" when none) and ProbeIn
	// whether the probe let it in (ScoreBreakdown.Explored) or left it
	// where the model ranks it (Recall.Probe).
	Probe   string
	ProbeIn bool
}

// CreditWrite is what one feedback writes to the memories it credits (see
// FeedbackTx.WriteCredits).
type CreditWrite struct {
	FeedbackID string
	Rater      string
	Signal     float64
	At         time.Time
	// Moved are the memories the feedback moved, in id order.
	Moved []*Memory
	// Credits are the credit rows: every memory (or reflection) the
	// feedback judged, and whether the rater's cap let it apply.
	Credits []Credit
}

// Credit is one credit row: a feedback's judgement of one memory or
// reflection, applied or recorded only.
type Credit struct {
	ID      string
	Applied bool
}

// AnswersKey is the key under which the store keeps the evidence of a
// tenant's judged answers (HelpEvidence.Answers), beside the memory ids
// and origin keys of AddLearning.
const AnswersKey = ""

// ReflectionPrefix starts the id of a reflection, which a recall may
// inject beside memories.
const ReflectionPrefix = "refl_"
