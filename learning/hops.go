package learning

import (
	"context"
	"slices"

	"github.com/engram-memory/engram"
)

// LinkStore is what multi-hop recall needs from the store.
type LinkStore interface {
	FindLinksOf(ctx context.Context, ids []string) ([]*engram.Link, error)
	FindMemoryByID(ctx context.Context, id string) (*engram.Memory, error)
}

// WithLinks lets recalls follow links (RecallRequest.Hops).
func (r *Recaller) WithLinks(ls LinkStore) *Recaller {
	r.links = ls
	return r
}

// Multi-hop recall. The hopSources best-scored candidates of a recall are
// the starting points; every memory linked to one of them (either
// direction) that is not a candidate yet joins with its relevance and
// match those of the memory it was reached from times hopDamping, per
// hop, and Breakdown.Via naming that memory and the relation; a linked
// memory that is a candidate already takes that relevance and match when
// they are higher than its own. The cut and
// the budget then treat it as any candidate: a linked memory goes in only
// when the memory it hangs from matched well enough that the damped match
// passes the cut. The constants are not tuned yet (docs/links.md).
const (
	hopDamping = 0.5
	hopSources = 2
)

// hop adds the memories linked to the best candidates, hops times, each
// round starting from the best of what the round before added.
func (r *Recaller) hop(ctx context.Context, out []Candidate, hops int, agentID, userID string) ([]Candidate, error) {
	if r.links == nil || hops <= 0 || len(out) == 0 {
		return out, nil
	}
	at := make(map[string]int, len(out))
	for i, c := range out {
		at[c.Memory.ID] = i
	}
	from := sources(out, func(c Candidate) bool { return !c.Breakdown.Pinned })
	now := r.now()
	for range hops {
		if len(from) == 0 {
			break
		}
		ids := make([]string, len(from))
		byID := make(map[string]Candidate, len(from))
		for i, c := range from {
			ids[i], byID[c.Memory.ID] = c.Memory.ID, c
		}
		links, err := r.links.FindLinksOf(ctx, ids)
		if err != nil {
			return nil, err
		}
		var added []Candidate
		for _, e := range ends(links, byID) {
			l, src, other := e.link, e.src, e.other
			s := byID[src]
			rel, match := s.Breakdown.Relevance*hopDamping, s.Breakdown.Match*hopDamping
			via := &engram.Via{From: src, Relation: l.Relation}
			if i, ok := at[other]; ok {
				// Already a candidate: the link lifts it when the memory
				// it hangs from answers better than its own words do. One
				// this round added keeps the best source's score (ends).
				if i >= len(out) {
					continue
				}
				c := &out[i]
				if c.Breakdown.Pinned || c.Breakdown.Via != nil || rel <= c.Breakdown.Relevance {
					continue
				}
				b := r.scorer.Score(c.Memory, rel)
				b.Match, b.Via = max(match, c.Breakdown.Match), via
				c.Breakdown, c.Group = b, InjectionGroup(c.Memory, b)
				continue
			}
			m, err := r.links.FindMemoryByID(ctx, other)
			if engram.ErrorCode(err) == engram.ENOTFOUND {
				continue
			}
			if err != nil {
				return nil, err
			}
			// A link never carries a recall past its scope: another
			// agent's or another end user's memory stays out.
			if !m.Valid || m.Archived || m.Expired(now) || (m.AgentID != "" && m.AgentID != agentID) || (m.UserID != "" && m.UserID != userID) {
				continue
			}
			at[other] = len(out) + len(added)
			b := r.scorer.Score(m, rel)
			b.Match, b.Via = match, via
			added = append(added, Candidate{Memory: m, Breakdown: b, Group: InjectionGroup(m, b)})
		}
		out = append(out, added...)
		from = sources(added, func(Candidate) bool { return true })
	}
	return out, nil
}

// sources returns the hopSources best-scored candidates that keep.
func sources(cs []Candidate, keep func(Candidate) bool) []Candidate {
	var out []Candidate
	for _, c := range cs {
		if keep(c) {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b Candidate) int { return cmpFloat(b.Breakdown.Score, a.Breakdown.Score) })
	return out[:min(len(out), hopSources)]
}

// end is a link seen from one of its ends that is a source of the hop.
type end struct {
	link       *engram.Link
	src, other string
}

// ends returns each link once from every end of it that is a source,
// best source first: a link between two sources can lift either.
func ends(links []*engram.Link, sources map[string]Candidate) []end {
	var out []end
	for _, l := range links {
		for _, e := range []end{{l, l.From, l.To}, {l, l.To, l.From}} {
			if _, ok := sources[e.src]; ok {
				out = append(out, e)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b end) int {
		return cmpFloat(sources[b.src].Breakdown.Score, sources[a.src].Breakdown.Score)
	})
	return out
}
