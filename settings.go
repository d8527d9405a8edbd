package engram

import "time"

// The settings below are plain values that cmd/engram reads from the
// configuration (configs/engram.yaml) and passes down. Their defaults are
// stated once, here: configs builds its defaults from these functions and
// the packages that use a section take it as given. The yaml tags name the
// keys of engram.yaml; nothing in this package reads a file.

// MemoryConfig is the L2 vocabulary and the defaults of a new memory.
type MemoryConfig struct {
	Categories        []string `yaml:"categories"`
	DefaultCategory   string   `yaml:"default_category"`
	DefaultPriority   Priority `yaml:"default_priority"`
	DefaultConfidence float64  `yaml:"default_confidence"`
	// Untrusted is "reject" or "quarantine": what happens to an external
	// write without provenance (see CheckProvenance).
	Untrusted string `yaml:"untrusted"`
	// Gate is "on" or "off": on holds every memory write (POST
	// /v1/memories, batches, PUT /v1/keys) to the write gate; off only the
	// writes that send "gate": true.
	Gate string `yaml:"gate"`
	// GateMode is "refuse" or "quarantine": what the gate does with a
	// memory that fails a rule (a 422, or storing it quarantined).
	GateMode string `yaml:"gate_mode"`
}

// DefaultMemoryConfig returns the default categories, life, P2, a
// confidence of 0.5, refusal of unprovenanced external writes, and the
// write gate off (a write asks for it).
func DefaultMemoryConfig() MemoryConfig {
	return MemoryConfig{Categories: append([]string(nil), DefaultCategories...), DefaultCategory: CategoryLife,
		DefaultPriority: P2, DefaultConfidence: 0.5, Untrusted: "reject", Gate: "off", GateMode: GateRefuse}
}

// LimitsConfig bounds what one request or one memory may hold.
type LimitsConfig struct {
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// MaxImportBytes bounds one POST /v1/import (a whole tenant export).
	MaxImportBytes     int64 `yaml:"max_import_bytes"`
	MaxJSONDepth       int   `yaml:"max_json_depth"`
	MaxBatch           int   `yaml:"max_batch"`
	MaxContentChars    int   `yaml:"max_content_chars"`
	MaxSummaryChars    int   `yaml:"max_summary_chars"`
	MaxTags            int   `yaml:"max_tags"`
	MaxTagChars        int   `yaml:"max_tag_chars"`
	MaxKeyBytes        int   `yaml:"max_key_bytes"`
	MaxKeySegmentBytes int   `yaml:"max_key_segment_bytes"`
	DefaultListLimit   int   `yaml:"default_list_limit"`
	MaxListLimit       int   `yaml:"max_list_limit"`
}

// DefaultLimitsConfig returns the README's limits: a 1 MiB body, JSON
// depth 32, batches of 100, 32,768 characters of content, 4,096 of
// summary, 32 tags of 64 characters, keys of 1,024 bytes (200 a segment),
// list pages of 50 (at most 500).
func DefaultLimitsConfig() LimitsConfig {
	return LimitsConfig{MaxBodyBytes: 1 << 20, MaxImportBytes: 1 << 30, MaxJSONDepth: 32, MaxBatch: 100, MaxContentChars: 32768,
		MaxSummaryChars: 4096, MaxTags: 32, MaxTagChars: 64, MaxKeyBytes: 1024, MaxKeySegmentBytes: 200,
		DefaultListLimit: 50, MaxListLimit: 500}
}

// KeyLimits returns the key size limits.
func (l LimitsConfig) KeyLimits() KeyLimits {
	return KeyLimits{MaxBytes: l.MaxKeyBytes, MaxSegmentBytes: l.MaxKeySegmentBytes}
}

// RecallConfig tunes recalls and the read blocks.
type RecallConfig struct {
	MaxBudget     int `yaml:"max_budget"`      // largest token_budget / token_limit accepted
	MaxQueryChars int `yaml:"max_query_chars"` // longer queries are cut (reported in degrade_reasons)
	Candidates    int `yaml:"candidates"`      // lexical hits scored per recall
	MinRouted     int `yaml:"min_routed"`      // fewer routed hits than this: the route is ignored
	Pinned        int `yaml:"pinned"`          // P0 memories that always qualify
	ContextWindow int `yaml:"context_window"`  // recent memories the read block (/v1/context) considers
	// OffRouteWeight scales the relevance of hits outside the routed
	// categories (when at least MinRouted hits are inside them); 0 drops
	// them, 1 ignores the route.
	OffRouteWeight float64 `yaml:"off_route_weight"`
	// Concepts lets a query's category words ("activities", "pets", 爱好)
	// also find memories that name a member of the category (swimming, a
	// dog, 游泳): see LexicalQuery.Concepts.
	Concepts bool `yaml:"concepts"`
}

// DefaultRecallConfig returns budgets up to 8,000 tokens, queries cut at
// 4,000 characters, 50 candidates, soft routing (0.8 off the route once 3
// hits are on it), 10 pinned memories, a read block over 200 and the
// concept lexicon on.
func DefaultRecallConfig() RecallConfig {
	return RecallConfig{MaxBudget: 8000, MaxQueryChars: 4000, Candidates: 50, MinRouted: 3, Pinned: 10,
		ContextWindow: 200, OffRouteWeight: 0.8, Concepts: true}
}

// ScoringConfig holds the constants of the recall score (DESIGN §3):
// Ebbinghaus stability in days, retention floor and growth per positive
// use for P1–P3 (P0 never decays), and the reward prior.
type ScoringConfig struct {
	P1StabilityDays  float64 `yaml:"p1_stability_days"`
	P2StabilityDays  float64 `yaml:"p2_stability_days"`
	P3StabilityDays  float64 `yaml:"p3_stability_days"`
	P1Floor          float64 `yaml:"p1_floor"`
	P2Floor          float64 `yaml:"p2_floor"`
	P3Floor          float64 `yaml:"p3_floor"`
	P1Growth         float64 `yaml:"p1_growth"`
	P2Growth         float64 `yaml:"p2_growth"`
	P3Growth         float64 `yaml:"p3_growth"`
	Shrink           float64 `yaml:"shrink"`             // S multiplier per negative use, in (0, 1)
	MinStabilityDays float64 `yaml:"min_stability_days"` // negative uses never shrink S below it
	MaxStabilityDays float64 `yaml:"max_stability_days"` // positive uses never grow S above it
	PriorUp          float64 `yaml:"prior_up"`           // α of the reward factor's Beta prior
	PriorDown        float64 `yaml:"prior_down"`         // β
	RevisionFactor   float64 `yaml:"revision_factor"`    // score multiplier of a needs_revision memory
	SupersededFactor float64 `yaml:"superseded_factor"`  // score multiplier of a memory a newer one of its origin and subject supersedes (1: no knowledge update)
}

// DefaultScoringConfig returns the constants of DESIGN §3: S of 365, 90 and
// 14 days for P1–P3, floors 0.3, 0.1 and 0, growth ×2, ×1.5 and ×1.3 per
// positive use, ×0.5 per negative use down to 1 day, S capped at 100 years,
// a Beta(5, 5) prior of the reward factor, which up votes raise (one by
// about 9%: it takes a record, not a thumb, to move a memory) and down
// votes leave alone, and needs_revision multiplying the score by 0.3.
func DefaultScoringConfig() ScoringConfig {
	return ScoringConfig{P1StabilityDays: 365, P2StabilityDays: 90, P3StabilityDays: 14,
		P1Floor: 0.3, P2Floor: 0.1, P3Floor: 0, P1Growth: 2.0, P2Growth: 1.5, P3Growth: 1.3,
		Shrink: 0.5, MinStabilityDays: 1, MaxStabilityDays: 36500, PriorUp: 5, PriorDown: 5, RevisionFactor: 0.3,
		SupersededFactor: 0.5}
}

// Stability returns the stability in days a new memory of priority p
// starts with: 0 (never decays) for P0.
func (c ScoringConfig) Stability(p Priority) float64 {
	switch p {
	case P1:
		return c.P1StabilityDays
	case P2:
		return c.P2StabilityDays
	case P3:
		return c.P3StabilityDays
	}
	return 0
}

// FeedbackConfig is how far thumbs and ratings move memories.
type FeedbackConfig struct {
	ConfidenceStep    float64       `yaml:"confidence_step"`    // share of the way to 1 (or 0) per full-strength signal
	RewardRate        float64       `yaml:"reward_rate"`        // weight of the newest signal in the reward's moving average
	RevisionThreshold int64         `yaml:"revision_threshold"` // lead of down votes (read against the tenant's good answers) at which needs_revision is set
	RaterCap          int           `yaml:"rater_cap"`          // feedbacks of one rater that may move one memory per window
	RaterWindow       time.Duration `yaml:"rater_window"`       // the window of RaterCap
	MaxTextChars      int           `yaml:"max_text_chars"`     // prompt, response, correction and reason, each
	// LearnQueries makes a memory that carried an up-voted answer learn
	// the recall's query (Memory.Learned), which the index then matches
	// at a third of the content's weight. Off by default: on the
	// learning benchmark it cost plain LoCoMo 0.002–0.004 of held-out
	// recall@10 and gave the recovery from misleading memories nothing.
	LearnQueries bool `yaml:"learn_queries"`
	// Async makes POST /v1/feedback answer 202 once the feedback is
	// durably queued, and apply it shortly after, for every request
	// (feedback.async); off, only a request with Prefer: respond-async.
	Async bool `yaml:"async"`
}

// DefaultFeedbackConfig returns 2% confidence steps, a reward moving
// average of weight 0.3, needs_revision at 3 net down votes, and one rater
// moving one memory at most 3 times a day.
func DefaultFeedbackConfig() FeedbackConfig {
	return FeedbackConfig{ConfidenceStep: 0.02, RewardRate: 0.3, RevisionThreshold: 5, RaterCap: 3,
		RaterWindow: 24 * time.Hour, MaxTextChars: 65536}
}
