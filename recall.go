package engram

import (
	"context"
	"time"
)

// ScoreBreakdown explains a recalled memory's score: the product of
// relevance, reward factor, confidence, retention, the revision penalty
// and helpfulness, each in [0, 1].
type ScoreBreakdown struct {
	Relevance  float64 `json:"relevance"`
	Reward     float64 `json:"reward"`     // (up + α) / (up + α + β): up votes raise it, down votes do not lower it
	Confidence float64 `json:"confidence"` // as stored
	Retention  float64 `json:"retention"`  // Ebbinghaus e^(−t/S), floored by priority
	Revision   float64 `json:"revision"`   // 1, or the demotion of a needs_revision memory
	// Superseded is 1, or the demotion of a memory that a newer one of the
	// same origin and subject among the recall's candidates outranks (a
	// knowledge update), with SupersededBy naming the newer one and
	// Subject the entity and attribute both were read to be about, e.g.
	// "Maya Ruiz / lives" (see learning/subject.go).
	Superseded   float64 `json:"superseded"`
	SupersededBy string  `json:"superseded_by,omitempty"`
	Subject      string  `json:"subject,omitempty"`
	AgeDays      float64 `json:"age_days"`  // t: days since last reinforcement
	Stability    float64 `json:"stability"` // S in days; 0 = never decays
	// Helpfulness is what feedback on the recalls that injected the memory
	// says about it, whatever their query (see Helpfulness): 1 when it is
	// no worse than the tenant's answers at large or nothing is known.
	Helpfulness float64 `json:"helpfulness"`
	// HelpGood and HelpBad are the evidence behind Helpfulness: recalls
	// judged good and bad, weighted by the memory's share and position in
	// them and by each rater's reputation.
	HelpGood float64 `json:"help_good"`
	HelpBad  float64 `json:"help_bad"`
	// OriginFactor is the part of Helpfulness that the memory's origin
	// (see Memory.Origin) earned, with OriginGood and OriginBad the
	// evidence of all of the origin's memories behind it.
	OriginFactor float64 `json:"origin_factor"`
	OriginGood   float64 `json:"origin_good"`
	OriginBad    float64 `json:"origin_bad"`
	// FeatureFactor is the part of Helpfulness the memory's features
	// earned (the learned model over kinds of memory, see
	// Memory.Features), with Features the three that moved it most.
	FeatureFactor float64         `json:"feature_factor"`
	Features      []FeatureWeight `json:"features,omitempty"`
	// Impact is the measured effect of injecting the memory (signal with
	// it minus signal when exploration held it back), when both are known.
	Impact *float64 `json:"impact,omitempty"`
	// Match is how well the memory answers the query on an absolute scale
	// in [0, 1], the same for every recall and tenant (the relevance cut
	// compares it with a fixed threshold); Relevance is relative to the
	// recall's best match and only ranks.
	Match float64 `json:"match"`
	// Explored marks a memory a kind probe let in (learning.explore_kinds):
	// the model distrusts its kinds, so FeatureFactor would have kept it
	// out, and this recall's Score and Helpfulness leave that factor out,
	// so that feedback measures what answers are like with its kinds in
	// (see Recall.Probe).
	Explored bool `json:"explored,omitempty"`
	// Pinned marks a memory injected as context whatever the query (a
	// pinned P0 identity memory that was not the recall's best match): it
	// takes no credit, vote or helpfulness evidence from feedback.
	Pinned bool `json:"pinned,omitempty"`
	// Cut says why a candidate was left out of the context (only on
	// Recall.LeftOut): "below_cut" (its match fell under the relevance
	// cut), "superseded" (a newer memory of the same subject won, see
	// SupersededBy), "budget" (it did not fit), "held_back" (exploration).
	Cut string `json:"cut,omitempty"`
	// Emotion is the factor the memory's emotional weight gives its score,
	// 1 + EmotionTieBreak × emotion: 1 for a neutral memory, 1.05 for one
	// said with full feeling, so it orders memories that answer equally
	// well and hardly moves the others (see emotion.go).
	Emotion float64 `json:"emotion"`
	// Speaker is the factor a speaker-aware read gave the score: set only
	// on a memory said by a speaker the query does not name when it names
	// another speaker of the candidates (absent: 1; see learning/speaker.go).
	Speaker float64 `json:"speaker,omitempty"`
	// Via is set on a memory that joined the recall by a link from one
	// of its best matches (RecallRequest.Hops), not by the query itself.
	Via *Via `json:"-"`
	// Concept is set on a memory the query's category words reached
	// through one of their members (RecallConfig.Concepts).
	Concept *Concept `json:"-"`
	Score   float64  `json:"score"`
}

// Via names the memory a recalled memory was reached from by a link, and
// the link's relation.
type Via struct {
	From     string `json:"from"`
	Relation string `json:"relation"`
}

// RecallItem is one memory chosen for a recall.
type RecallItem struct {
	ID          string         `json:"id"`
	Key         string         `json:"key,omitempty"`
	Category    string         `json:"category"`
	Version     int64          `json:"version"`
	Text        string         `json:"text"`   // what was injected: content, or the summary
	Tokens      int            `json:"tokens"` // tokens of the rendered line
	UsedSummary bool           `json:"used_summary,omitempty"`
	Score       float64        `json:"score"`
	Breakdown   ScoreBreakdown `json:"breakdown"`
	// Via is Breakdown.Via: the memory this one was reached from by a link.
	Via *Via `json:"via,omitempty"`
	// Concept is Breakdown.Concept: the category word of the query and the
	// member of it the memory holds.
	Concept *Concept `json:"concept,omitempty"`
}

// RecallRequest asks for the memories worth injecting for a query.
type RecallRequest struct {
	Query       string   `json:"query"`
	TokenBudget int      `json:"token_budget"`
	Tags        []string `json:"tags,omitempty"`
	AgentID     string   `json:"agent_id,omitempty"`
	UserID      string   `json:"user_id,omitempty"` // shared memories plus this user's
	SessionID   string   `json:"session_id,omitempty"`
	// Fill packs every candidate that fits the budget, best first, as
	// recalls did before the relevance cut: the budget becomes a target.
	Fill bool `json:"fill,omitempty"`
	// Identity injects the pinned identity block (P0 memories) whatever
	// the route says; without it the block goes in only when the route
	// asks for it (Route.Identity).
	Identity bool `json:"identity,omitempty"`
	// Hops follows links from the best matches: 0 (the default) none, 1
	// the memories linked to them, 2 also those linked to these (see
	// docs/links.md).
	Hops *int `json:"hops,omitempty"`
}

// Recall is one budgeted retrieval, stored under ID so that feedback can
// be credited to the memories it injected.
type Recall struct {
	ID             string       `json:"recall_id"`
	Query          string       `json:"query"`
	Route          Route        `json:"route"`
	Items          []RecallItem `json:"items"`
	Context        string       `json:"context"`
	TokensUsed     int          `json:"tokens_used"`
	TokenBudget    int          `json:"token_budget"`
	DegradeReasons []string     `json:"degrade_reasons,omitempty"`
	// LeftOut are the best-scored candidates that were not injected, each
	// with why in its breakdown's Cut, so a client or analyst can see
	// where the context stopped and what a knowledge update demoted.
	LeftOut []RecallItem `json:"left_out,omitempty"`
	// HeldBack is the memory exploration left out of this recall
	// (learning.explore), with the score it had: feedback on the recall
	// counts towards that memory's measured impact. Never shown to the
	// client, whose context it is not part of.
	HeldBack *RecallItem `json:"-"`
	// Probe is the memory a kind probe chose and left where the learned
	// model ranks it (the probe's control arm; see
	// ScoreBreakdown.Explored): feedback on the recall counts as an answer
	// without its kinds let in. Never shown to the client.
	Probe     *RecallItem `json:"-"`
	CreatedAt time.Time   `json:"created_at"`
}

// RecallService runs recalls for the tenant in the context.
type RecallService interface {
	// Recall routes, retrieves, scores and packs. EINVALID for an empty
	// query or a budget outside [1, max].
	Recall(ctx context.Context, req RecallRequest) (*Recall, error)
}

// Boot is the first thing injected into a new conversation: the persona
// document and the P0 identity memories.
type Boot struct {
	Persona    string    `json:"persona"`
	Memories   []*Memory `json:"memories"`
	Context    string    `json:"context"`
	TokensUsed int       `json:"tokens_used"`
}

// LexicalQuery asks the store for the memories that best match a text.
type LexicalQuery struct {
	Text    string
	AgentID string // "" sees shared memories only; else shared plus the agent's own
	Limit   int
	Expand  bool // add pseudo-relevance-feedback terms from the best first matches
	// Concepts also searches, at a lower weight, for the members of the
	// general categories the query names ("activities" → swimming,
	// pottery, …; 爱好 → 游泳, …), from the index's built-in lexicon.
	Concepts bool
}

// LexicalHit is one match with its raw BM25 score (> 0).
type LexicalHit struct {
	Memory *Memory
	Score  float64
	// Match is the share of the query's weight (its terms' IDF in the
	// tenant, an unknown term as the rarest known) that the memory holds, in
	// [0, 1]: unlike Score, comparable across queries and tenants. 0 where
	// the searcher does not measure it (a vector search).
	Match float64
	// Concept is set on a hit that holds a member of a category the
	// query names (LexicalQuery.Concepts): the member that adds most.
	Concept *Concept
}

// Concept names the category word of a query and the member of that
// category a recalled memory holds (in its index form: lower-cased,
// stemmed, "swim" for swimming), which brought it to a query that does
// not say the member's name.
type Concept struct {
	Category string `json:"category"`
	Term     string `json:"term"`
}

// MaxHops bounds RecallRequest.Hops.
const MaxHops = 2
