package router

import (
	"context"

	"github.com/engram-memory/engram"
)

// Learning wraps a MemoryService so that every successful write keeps the
// tenant's routing model in step: a live memory's category and text are
// observed, a replaced, tombstoned or archived one forgotten. It mirrors
// what LabelSource loads (live memories only), so a model kept current by
// writes equals one loaded afresh.
func Learning(mem engram.MemoryService, svc *Service) engram.MemoryService {
	return &learning{MemoryService: mem, svc: svc}
}

type learning struct {
	engram.MemoryService
	svc *Service
}

func labelText(m *engram.Memory) string { return m.Content + "\n" + m.Summary }

func live(m *engram.Memory) bool { return m != nil && m.Valid && !m.Archived }

// swap forgets before and observes after, each when live.
func (l *learning) swap(ctx context.Context, before, after *engram.Memory) {
	if live(before) {
		l.svc.Forget(ctx, before.Category, labelText(before))
	}
	if live(after) {
		l.svc.Observe(ctx, after.Category, labelText(after))
	}
}

func (l *learning) CreateMemory(ctx context.Context, m *engram.Memory) (*engram.CreateResult, error) {
	res, err := l.MemoryService.CreateMemory(ctx, m)
	if err == nil && !res.Deduplicated {
		l.swap(ctx, nil, res.Memory)
	}
	return res, err
}

func (l *learning) CreateMemories(ctx context.Context, ms []*engram.Memory) ([]*engram.CreateResult, error) {
	res, err := l.MemoryService.CreateMemories(ctx, ms)
	if err == nil {
		for _, r := range res {
			if !r.Deduplicated {
				l.swap(ctx, nil, r.Memory)
			}
		}
	}
	return res, err
}

// change runs a write of one memory and swaps its old state for its new.
func (l *learning) change(ctx context.Context, id string, write func() (*engram.Memory, error)) (*engram.Memory, error) {
	before, err := l.MemoryService.FindMemoryByID(ctx, id)
	if err != nil {
		return nil, err
	}
	after, err := write()
	if err == nil && after.Version != before.Version {
		l.swap(ctx, before, after)
	}
	return after, err
}

func (l *learning) UpdateMemory(ctx context.Context, id string, u engram.MemoryUpdate) (*engram.Memory, error) {
	return l.change(ctx, id, func() (*engram.Memory, error) { return l.MemoryService.UpdateMemory(ctx, id, u) })
}

func (l *learning) DeleteMemory(ctx context.Context, id string, expect *int64) (*engram.Memory, error) {
	return l.change(ctx, id, func() (*engram.Memory, error) { return l.MemoryService.DeleteMemory(ctx, id, expect) })
}

func (l *learning) RollbackMemory(ctx context.Context, id string, version int64, expect *int64) (*engram.Memory, error) {
	return l.change(ctx, id, func() (*engram.Memory, error) {
		return l.MemoryService.RollbackMemory(ctx, id, version, expect)
	})
}

func (l *learning) SetKey(ctx context.Context, w engram.KeyWrite) (*engram.Memory, error) {
	before, _ := l.MemoryService.FindMemoryByKey(ctx, w.Key) // nil when absent, tombstoned or expired
	after, err := l.MemoryService.SetKey(ctx, w)
	if err == nil && (before == nil || after.Version != before.Version) {
		l.swap(ctx, before, after)
	}
	return after, err
}
