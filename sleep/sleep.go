// Package sleep is engram's sleep cycle (DESIGN §5): for each tenant, it
// merges near duplicates, archives what decayed and what expired, folds
// old feedback events, and has the reflector re-reflect the groups that
// changed. It is a workflow over ordinary, version-checked store writes;
// it declares the small Store and Reflector it needs, and cmd/engram
// wires them (the store and the reflections service).
package sleep

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/engram-memory/engram"
)

// Store is what the sleep cycle needs from the store.
type Store interface {
	FindTenants(ctx context.Context) ([]*engram.Tenant, error)
	FindMemories(ctx context.Context, f engram.MemoryFilter) (*engram.MemoryPage, error)
	UpdateMemory(ctx context.Context, id string, upd engram.MemoryUpdate) (*engram.Memory, error)
	DeleteMemory(ctx context.Context, id string, expectVersion *int64) (*engram.Memory, error)
	FoldFeedbackEvents(ctx context.Context, before time.Time) (int64, error)
	EventLogBytes(ctx context.Context) (int64, error)
}

// Reflector re-reflects the tenant's groups that changed.
type Reflector interface {
	Reflect(ctx context.Context, req engram.ReflectRequest) (*engram.ReflectResult, error)
}

// Config tunes the sleep cycle.
type Config struct {
	// MergeSimilarity is the term overlap (Jaccard) at which two memories
	// of one category and owner are near duplicates and merged.
	MergeSimilarity float64
	// ArchiveBelow archives a memory whose retention e^(−t/S), before its
	// floor, fell below it: with 0.02, a P3 memory after about 8 weeks
	// without reinforcement, P2 after about a year, P1 after about four.
	ArchiveBelow float64
	// CompactAfter is the age past which feedback events are folded.
	CompactAfter time.Duration
	// Scoring gives the stability of a memory that stores none.
	Scoring engram.ScoringConfig
}

// Sleeper runs the sleep cycle (DESIGN §5) for the tenant in the context:
// it merges near duplicates, archives what decayed and what expired,
// folds old feedback events, and re-reflects the groups that changed. A
// second run right after changes nothing. Every change is an ordinary
// memory write (an event in the change feed), made only if the memory is
// still at the version the sleep read, so a sleep racing a client, or
// another server's sleep, never overwrites a newer state.
type Sleeper struct {
	store   Store
	reflect Reflector
	cfg     Config
	now     engram.Clock
}

var _ engram.SleepService = (*Sleeper)(nil)

// New returns the sleep cycle; reflector re-reflects. A nil now means
// time.Now.
func New(st Store, reflector Reflector, cfg Config, now engram.Clock) *Sleeper {
	if now == nil {
		now = time.Now
	}
	return &Sleeper{store: st, reflect: reflector, cfg: cfg, now: now}
}

// Sleep runs one cycle for the tenant in ctx.
func (s *Sleeper) Sleep(ctx context.Context) (*engram.SleepResult, error) {
	res := &engram.SleepResult{}
	live, err := s.liveMemories(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var rest []*engram.Memory
	for _, m := range live {
		switch {
		case m.Expired(now):
			if err := s.archive(ctx, m, &res.Expired, &res.Conflicts); err != nil {
				return nil, err
			}
		case s.decayed(m, now):
			if err := s.archive(ctx, m, &res.Archived, &res.Conflicts); err != nil {
				return nil, err
			}
		default:
			rest = append(rest, m)
		}
	}
	merged := map[string]bool{}
	for _, p := range nearDuplicates(rest, s.cfg.MergeSimilarity) {
		if err := s.merge(ctx, p[0], p[1], res); err != nil {
			return nil, err
		}
		merged[p[1].ID] = true
	}
	rest = slices.DeleteFunc(rest, func(m *engram.Memory) bool { return merged[m.ID] })
	if res.Linked, err = s.linkEntities(ctx, rest); err != nil {
		return nil, err
	}
	if res.EventBytesBefore, err = s.store.EventLogBytes(ctx); err != nil {
		return nil, err
	}
	if res.EventsFolded, err = s.store.FoldFeedbackEvents(ctx, now.Add(-s.cfg.CompactAfter)); err != nil {
		return nil, err
	}
	if res.EventBytesAfter, err = s.store.EventLogBytes(ctx); err != nil {
		return nil, err
	}
	if res.Reflect, err = s.reflect.Reflect(ctx, engram.ReflectRequest{}); err != nil {
		return nil, err
	}
	return res, nil
}

// pageSize is how many memories one read of the store returns.
const pageSize = 500

// liveMemories reads the tenant's valid, unarchived memories, expired ones
// included (the list leaves those out unless asked).
func (s *Sleeper) liveMemories(ctx context.Context) ([]*engram.Memory, error) {
	f := engram.MemoryFilter{Limit: pageSize, IncludeInvalid: true}
	var out []*engram.Memory
	for {
		page, err := s.store.FindMemories(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, m := range page.Items {
			if m.Valid && !m.Archived {
				out = append(out, m)
			}
		}
		if page.NextCursor == "" {
			return out, nil
		}
		f.Cursor = page.NextCursor
	}
}

// decayed reports a memory whose retention before its floor
// (engram.Retention, which the recall score uses) fell below ArchiveBelow. P0 memories never decay; keyed memories are state a client
// set on purpose (they expire through expires_at) and are not archived by
// age.
func (s *Sleeper) decayed(m *engram.Memory, now time.Time) bool {
	if m.Priority == engram.P0 || m.Key != "" || s.cfg.ArchiveBelow <= 0 {
		return false
	}
	st := m.Stability
	if !(st > 0) {
		st = s.cfg.Scoring.Stability(m.Priority)
	}
	return engram.Retention(m.AgeDays(now), engram.EmotionStability(st, engram.EmotionOf(m))) < s.cfg.ArchiveBelow
}

// archive takes m out of the active set at the version read; a memory
// changed meanwhile is left for the next sleep.
func (s *Sleeper) archive(ctx context.Context, m *engram.Memory, counter, conflicts *int) error {
	yes := true
	_, err := s.store.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Archived: &yes, ExpectVersion: &m.Version})
	switch engram.ErrorCode(err) {
	case "":
		*counter++
		return nil
	case engram.ECONFLICT, engram.ENOTFOUND:
		*conflicts++
		return nil
	}
	return err
}

// mergedSource is the provenance of a memory that absorbed another: its
// own source and, for each memory merged into it, that memory's id and
// source. The merged memory stays, tombstoned, with its history.
type mergedSource struct {
	Kind   string          `json:"kind"` // "merge"
	Source json.RawMessage `json:"source,omitempty"`
	Merged []mergedFrom    `json:"merged"`
}

type mergedFrom struct {
	ID     string          `json:"id"`
	Source json.RawMessage `json:"source,omitempty"`
}

// merge folds drop into keep: keep takes both provenances and the union of
// their tags, drop is tombstoned. Each step is conditional on the version
// the sleep read.
func (s *Sleeper) merge(ctx context.Context, keep, drop *engram.Memory, res *engram.SleepResult) error {
	src := mergedSource{Kind: "merge", Source: keep.Source}
	var prior mergedSource
	if json.Unmarshal(keep.Source, &prior) == nil && prior.Kind == "merge" {
		src = prior
	}
	src.Merged = append(src.Merged, mergedFrom{ID: drop.ID, Source: drop.Source})
	raw, err := json.Marshal(src)
	if err != nil {
		return err
	}
	source := json.RawMessage(raw)
	tags := append([]string(nil), keep.Tags...)
	for _, t := range drop.Tags {
		if !slices.Contains(keep.Tags, t) {
			tags = append(tags, t)
		}
	}
	if _, err := s.store.UpdateMemory(ctx, keep.ID, engram.MemoryUpdate{Source: &source, Tags: &tags, ExpectVersion: &keep.Version}); err != nil {
		if c := engram.ErrorCode(err); c == engram.ECONFLICT || c == engram.ENOTFOUND || c == engram.EINVALID {
			res.Conflicts++
			return nil
		}
		return fmt.Errorf("merge %s into %s: %w", drop.ID, keep.ID, err)
	}
	if _, err := s.store.DeleteMemory(ctx, drop.ID, &drop.Version); err != nil {
		if c := engram.ErrorCode(err); c == engram.ECONFLICT || c == engram.ENOTFOUND {
			res.Conflicts++
			return nil
		}
		return fmt.Errorf("merge %s into %s: %w", drop.ID, keep.ID, err)
	}
	res.Merged++
	return nil
}
