package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/clearance"
	"github.com/engram-memory/engram/store"
)

// The reads of recall, boot, the context block and the prompt go through
// the reader's clearance (internal/clearance) here, where the recall
// pipeline meets the store, so that no door can forget it.

// PinnedMemories implements learning.RecallStore.
func (s recallStore) PinnedMemories(ctx context.Context, agentID string, limit int) ([]*engram.Memory, error) {
	ms, err := s.DB.PinnedMemories(ctx, agentID, limit)
	return clearance.SeeAll(ctx, ms), err
}

// RecentMemories implements learning.RecallStore.
func (s recallStore) RecentMemories(ctx context.Context, agentID string, limit int) ([]*engram.Memory, error) {
	ms, err := s.DB.RecentMemories(ctx, agentID, limit)
	return clearance.SeeAll(ctx, ms), err
}

// FindMemoryByKey implements learning.RecallStore (personas).
func (s recallStore) FindMemoryByKey(ctx context.Context, key string) (*engram.Memory, error) {
	m, err := s.DB.FindMemoryByKey(ctx, key)
	return clearance.SeeOne(ctx, m, err)
}

// denseStore is the vector store as recall sees it.
type denseStore struct{ *store.DB }

// VectorSearch implements learning.VectorStore.
func (s denseStore) VectorSearch(ctx context.Context, model string, vec []float32, agentID string, limit int) ([]engram.LexicalHit, error) {
	hits, err := s.DB.VectorSearch(ctx, model, vec, agentID, limit)
	return clearance.SeeHits(ctx, hits), err
}

// EachReflection implements learning.RecallStore: the reflections a
// reflect-intent recall may inject, as the reader may see them.
func (s recallStore) EachReflection(ctx context.Context, fn func(*engram.Reflection) error) error {
	if engram.ReaderFromContext(ctx) == nil {
		return s.DB.EachReflection(ctx, fn)
	}
	var rs []*engram.Reflection
	if err := s.DB.EachReflection(ctx, func(r *engram.Reflection) error {
		rs = append(rs, r)
		return nil
	}); err != nil {
		return err
	}
	rs, err := clearance.SeeReflections(ctx, s.MemoryLevels, rs)
	if err != nil {
		return err
	}
	for _, r := range rs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// reflectionStore is the reflections' store as a key reads it: a
// reflection is as secret as the most secret memory it was written from.
// The reflector's own reads (the group's memories, the stored reflection
// it compares with) pass unchanged, and so do a reflection's versions:
// every door reads the current version through the rule first (and
// answers 404 when it may not), and shows of the versions their
// metadata only.
type reflectionStore struct{ *store.DB }

// FindReflectionByID implements reflections.Store.
func (s reflectionStore) FindReflectionByID(ctx context.Context, id string) (*engram.Reflection, error) {
	r, err := s.DB.FindReflectionByID(ctx, id)
	return clearance.SeeReflection(ctx, s.MemoryLevels, r, err)
}

// FindReflections implements reflections.Store.
func (s reflectionStore) FindReflections(ctx context.Context, f engram.ReflectionFilter) (*engram.ReflectionPage, error) {
	p, err := s.DB.FindReflections(ctx, f)
	if err != nil {
		return nil, err
	}
	if p.Items, err = clearance.SeeReflections(ctx, s.MemoryLevels, p.Items); err != nil {
		return nil, err
	}
	return p, nil
}

// reflector is the reflections service as a key uses it: a reflect run's
// outcomes name only groups whose reflection the key may see
// (clearance.SeeOutcomes).
type reflector struct {
	engram.ReflectionService
	find findReflection
}

// findReflection reads a reflection through the key's clearance, not
// rendered (reflectionStore.FindReflectionByID).
type findReflection func(context.Context, string) (*engram.Reflection, error)

// Reflect implements engram.ReflectionService.
func (r reflector) Reflect(ctx context.Context, req engram.ReflectRequest) (*engram.ReflectResult, error) {
	res, err := r.ReflectionService.Reflect(ctx, req)
	if err != nil {
		return nil, err
	}
	return clearance.SeeOutcomes(ctx, r.find, res)
}

// jobReader is the job service as a key reads it: a finished reflect or
// sleep job ran without a reader, so the outcomes stored in its result
// are filtered when it is read, as the inline answer's are.
type jobReader struct {
	engram.JobService
	find findReflection
}

// FindJobByID implements engram.JobService.
func (s jobReader) FindJobByID(ctx context.Context, id string) (*engram.Job, error) {
	j, err := s.JobService.FindJobByID(ctx, id)
	if err != nil {
		return nil, err
	}
	return j, s.see(ctx, j)
}

// FindJobs implements engram.JobService.
func (s jobReader) FindJobs(ctx context.Context, f engram.JobFilter) (*engram.JobPage, error) {
	p, err := s.JobService.FindJobs(ctx, f)
	if err != nil {
		return nil, err
	}
	for _, j := range p.Items {
		if err := s.see(ctx, j); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// see rewrites a reflect or sleep job's stored result through
// clearance.SeeOutcomes.
func (s jobReader) see(ctx context.Context, j *engram.Job) error {
	if len(j.Result) == 0 || engram.ReaderFromContext(ctx) == nil {
		return nil
	}
	var err error
	switch j.Kind {
	case engram.JobReflect:
		var res engram.ReflectResult
		if err = json.Unmarshal(j.Result, &res); err != nil {
			return fmt.Errorf("job %s: result: %w", j.ID, err)
		}
		var seen *engram.ReflectResult
		if seen, err = clearance.SeeOutcomes(ctx, s.find, &res); err != nil {
			return err
		}
		j.Result, err = json.Marshal(seen)
	case engram.JobSleep:
		var res engram.SleepResult
		if err = json.Unmarshal(j.Result, &res); err != nil {
			return fmt.Errorf("job %s: result: %w", j.ID, err)
		}
		if res.Reflect, err = clearance.SeeOutcomes(ctx, s.find, res.Reflect); err != nil {
			return err
		}
		j.Result, err = json.Marshal(res)
	}
	return err
}
