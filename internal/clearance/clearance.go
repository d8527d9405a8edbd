// Package clearance applies a key's read rights to the memories every
// door reads: a memory above the key's clearance is left out or masked
// (its tenant's withhold mode) and counted, and for a key that wants the
// masker, secrets and personal data are redacted from the text it reads.
// The reader comes from the request's context (engram.ReaderFromContext);
// without one (the CLI, the server's own jobs) memories pass unchanged.
package clearance

import (
	"context"
	"encoding/json"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/wire"
)

// MaskedText is what a masked memory says instead of its content.
func MaskedText(level string) string { return "[withheld: " + level + "]" }

// See returns what the reader in ctx may see of m: m itself, a copy that
// is masked or redacted, or nil when it is left out. Withheld memories
// are counted in the reader.
func See(ctx context.Context, m *engram.Memory) *engram.Memory {
	r := engram.ReaderFromContext(ctx)
	if r == nil || m == nil {
		return m
	}
	if !engram.Cleared(r.Clearance, m.SecurityLevel) {
		r.CountWithheld()
		if r.Withhold != engram.WithholdMask {
			return nil
		}
		c := *m
		c.Content, c.Summary, c.Context, c.Learned = MaskedText(m.SecurityLevel), "", "", ""
		c.Data, c.Source, c.Tags = nil, nil, []string{}
		c.TokenCount, c.SummaryTokenCount = 0, 0
		return &c
	}
	if !r.MaskPII {
		return m
	}
	c := *m
	c.Content, c.Summary, c.Context, c.Learned = Redact(m.Content), Redact(m.Summary), Redact(m.Context), Redact(m.Learned)
	if len(m.Data) > 0 {
		if d := Redact(string(m.Data)); json.Valid([]byte(d)) {
			c.Data = json.RawMessage(d)
		} else {
			c.Data = nil
		}
	}
	return &c
}

// SeeAll applies See to every memory and drops those left out.
func SeeAll(ctx context.Context, ms []*engram.Memory) []*engram.Memory {
	if engram.ReaderFromContext(ctx) == nil {
		return ms
	}
	out := ms[:0:0]
	for _, m := range ms {
		if s := See(ctx, m); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// SeeHits applies See to search hits.
func SeeHits(ctx context.Context, hits []engram.LexicalHit) []engram.LexicalHit {
	if engram.ReaderFromContext(ctx) == nil {
		return hits
	}
	out := hits[:0:0]
	for _, h := range hits {
		if h.Memory = See(ctx, h.Memory); h.Memory != nil {
			out = append(out, h)
		}
	}
	return out
}

// SeeOne is See for a read of one memory: ENOTFOUND, as if it did not
// exist, when it is left out.
func SeeOne(ctx context.Context, m *engram.Memory, err error) (*engram.Memory, error) {
	if err != nil {
		return nil, err
	}
	if s := See(ctx, m); s != nil {
		return s, nil
	}
	return nil, engram.Errorf(engram.ENOTFOUND, "memory not found")
}

// Memories is a memory service whose reads go through See, and whose
// writes to an existing memory are refused when the reader may not read
// it (guard); creating memories passes unchanged, but a create that
// matched a stored memory (deduplicated) answers with it as seeWritten
// shows it.
type Memories struct {
	engram.MemoryService
}

// CreateMemory implements engram.MemoryService. The duplicate guard is
// per security level, so only a write up to a level above the clearance
// can meet a stored memory the writer may not read: it learns that its
// text is stored there, as with any duplicate, and nothing more of the
// memory (masked, counted).
func (s Memories) CreateMemory(ctx context.Context, m *engram.Memory) (*engram.CreateResult, error) {
	res, err := s.MemoryService.CreateMemory(ctx, m)
	if err == nil && res != nil && res.Deduplicated {
		res.Memory, _ = seeWritten(ctx, res.Memory, nil)
	}
	return res, err
}

// CreateMemories implements engram.MemoryService, as CreateMemory.
func (s Memories) CreateMemories(ctx context.Context, ms []*engram.Memory) ([]*engram.CreateResult, error) {
	res, err := s.MemoryService.CreateMemories(ctx, ms)
	for _, r := range res {
		if r != nil && r.Deduplicated {
			r.Memory, _ = seeWritten(ctx, r.Memory, nil)
		}
	}
	return res, err
}

// FindMemoryByID implements engram.MemoryService.
func (s Memories) FindMemoryByID(ctx context.Context, id string) (*engram.Memory, error) {
	m, err := s.MemoryService.FindMemoryByID(ctx, id)
	return SeeOne(ctx, m, err)
}

// FindMemoryByKey implements engram.MemoryService.
func (s Memories) FindMemoryByKey(ctx context.Context, key string) (*engram.Memory, error) {
	m, err := s.MemoryService.FindMemoryByKey(ctx, key)
	return SeeOne(ctx, m, err)
}

// FindMemories implements engram.MemoryService: a page may hold fewer
// items than its limit when some were left out.
func (s Memories) FindMemories(ctx context.Context, f engram.MemoryFilter) (*engram.MemoryPage, error) {
	p, err := s.MemoryService.FindMemories(ctx, f)
	if err != nil {
		return nil, err
	}
	p.Items = SeeAll(ctx, p.Items)
	return p, nil
}

// FindMemoryEvents implements engram.MemoryService.
func (s Memories) FindMemoryEvents(ctx context.Context, id string) ([]*engram.MemoryEvent, error) {
	if _, err := s.FindMemoryByID(ctx, id); err != nil {
		return nil, err
	}
	evs, err := s.MemoryService.FindMemoryEvents(ctx, id)
	return seeEvents(ctx, evs), err
}

// FindMemoryEventsPage implements engram.MemoryService.
func (s Memories) FindMemoryEventsPage(ctx context.Context, id string, after int64, limit int) ([]*engram.MemoryEvent, error) {
	if _, err := s.FindMemoryByID(ctx, id); err != nil {
		return nil, err
	}
	evs, err := s.MemoryService.FindMemoryEventsPage(ctx, id, after, limit)
	return seeEvents(ctx, evs), err
}

// seeEvents masks each state of a history the reader may not see; a
// state left out becomes a masked one, so the history keeps its shape.
func seeEvents(ctx context.Context, evs []*engram.MemoryEvent) []*engram.MemoryEvent {
	r := engram.ReaderFromContext(ctx)
	if r == nil {
		return evs
	}
	mask := *r
	mask.Withhold = engram.WithholdMask
	mctx := engram.WithReader(ctx, &mask)
	for _, e := range evs {
		e.Before, e.After = See(mctx, e.Before), See(mctx, e.After)
	}
	return evs
}

// guard refuses a write to a memory the reader may not read in clear, so
// that a write cannot read (its answer is the memory) nor lower a level:
// ENOTFOUND as a read would be in omit mode, EFORBIDDEN in mask mode. A
// key may write above its clearance (a new memory, or raising a level).
func guard(ctx context.Context, m *engram.Memory, err error) error {
	r := engram.ReaderFromContext(ctx)
	switch {
	case r == nil || engram.ErrorCode(err) == engram.ENOTFOUND:
		return nil
	case err != nil:
		return err
	case engram.Cleared(r.Clearance, m.SecurityLevel):
		return nil
	}
	r.CountWithheld()
	if r.Withhold == engram.WithholdMask {
		return engram.Errorf(wire.EFORBIDDEN, "this memory is above the key's clearance (%s)", r.Clearance)
	}
	return engram.Errorf(engram.ENOTFOUND, "memory not found")
}

// guardID is guard of the memory id as ms reads it; without a reader it
// reads nothing.
func guardID(ctx context.Context, ms engram.MemoryService, id string) error {
	if engram.ReaderFromContext(ctx) == nil {
		return nil
	}
	m, err := ms.FindMemoryByID(ctx, id)
	return guard(ctx, m, err)
}

// UpdateMemory implements engram.MemoryService.
func (s Memories) UpdateMemory(ctx context.Context, id string, u engram.MemoryUpdate) (*engram.Memory, error) {
	if err := guardID(ctx, s.MemoryService, id); err != nil {
		return nil, err
	}
	m, err := s.MemoryService.UpdateMemory(ctx, id, u)
	return seeWritten(ctx, m, err)
}

// DeleteMemory implements engram.MemoryService.
func (s Memories) DeleteMemory(ctx context.Context, id string, expect *int64) (*engram.Memory, error) {
	if err := guardID(ctx, s.MemoryService, id); err != nil {
		return nil, err
	}
	m, err := s.MemoryService.DeleteMemory(ctx, id, expect)
	return seeWritten(ctx, m, err)
}

// RollbackMemory implements engram.MemoryService.
func (s Memories) RollbackMemory(ctx context.Context, id string, version int64, expect *int64) (*engram.Memory, error) {
	if err := guardID(ctx, s.MemoryService, id); err != nil {
		return nil, err
	}
	m, err := s.MemoryService.RollbackMemory(ctx, id, version, expect)
	return seeWritten(ctx, m, err)
}

// SetKey implements engram.MemoryService: replacing or tombstoning a
// memory above the clearance is refused as in guard.
func (s Memories) SetKey(ctx context.Context, w engram.KeyWrite) (*engram.Memory, error) {
	if engram.ReaderFromContext(ctx) != nil {
		if m, err := s.MemoryService.FindMemoryByKey(ctx, w.Key); engram.ErrorCode(err) != engram.EINVALID {
			if err := guard(ctx, m, err); err != nil {
				return nil, err
			}
		}
	}
	m, err := s.MemoryService.SetKey(ctx, w)
	return seeWritten(ctx, m, err)
}

// seeWritten is what the writer sees of the memory its write left: the
// masker applies; a memory the write raised above the clearance is
// masked (the writer knows what it wrote, not what it may read now).
func seeWritten(ctx context.Context, m *engram.Memory, err error) (*engram.Memory, error) {
	if err != nil || m == nil {
		return m, err
	}
	r := engram.ReaderFromContext(ctx)
	if r == nil {
		return m, nil
	}
	mask := *r
	mask.Withhold = engram.WithholdMask
	return See(engram.WithReader(ctx, &mask), m), nil
}
