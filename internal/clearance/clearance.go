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

// Memories is a memory service whose reads go through See; writes pass
// unchanged.
type Memories struct {
	engram.MemoryService
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
