package learning

import (
	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
)

// NewScoreConfig maps the scoring section of the configuration.
func NewScoreConfig(c configs.ScoringConfig) ScoreConfig {
	return ScoreConfig{
		Decay: map[engram.Priority]Decay{
			engram.P0: {Stability: 0, Floor: 1, Growth: 1},
			engram.P1: {Stability: c.P1StabilityDays, Floor: c.P1Floor, Growth: c.P1Growth},
			engram.P2: {Stability: c.P2StabilityDays, Floor: c.P2Floor, Growth: c.P2Growth},
			engram.P3: {Stability: c.P3StabilityDays, Floor: c.P3Floor, Growth: c.P3Growth},
		},
		Shrink:         c.Shrink,
		MinStability:   c.MinStabilityDays,
		MaxStability:   c.MaxStabilityDays,
		PriorUp:        c.PriorUp,
		PriorDown:      c.PriorDown,
		RevisionFactor: c.RevisionFactor,
	}
}

// NewRecallConfig maps the recall section of the configuration.
func NewRecallConfig(c configs.RecallConfig) RecallConfig {
	return RecallConfig{MaxBudget: c.MaxBudget, MaxQueryChars: c.MaxQueryChars, Candidates: c.Candidates,
		MinRouted: c.MinRouted, Pinned: c.Pinned, ContextWindow: c.ContextWindow, OffRouteWeight: c.OffRouteWeight}
}
