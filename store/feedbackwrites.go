package store

import (
	"fmt"
	"sort"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// groupWrites holds what a feedback group's credits did to memories and
// feedback_credits until the group's end (flush), so that a memory the
// group's feedbacks credit is written once, at its last version, and the
// credits of all of them go in one statement. Every feedback of the group
// reads the memories through it (feedbackTx.LockMemories, FindMemory) and
// counts the rater's credits with its pending ones (CountCredits), so it
// sees its predecessors' credits as if they were written.
//
// A feedback works on its own groupWrites (own), which the group takes
// once the feedback succeeded (merge): one rolled back to its savepoint
// leaves nothing in the group's.
type groupWrites struct {
	mems      map[string]*pendingMemory // the memory as last left, by id
	dropped   map[string]bool           // own only: written past the cache (see drop)
	credits   []creditRow
	feedbacks []feedbackRow // the feedback rows, in the members' order
	applied   []string      // the pending feedbacks applied (their rows to delete)
}

// pendingMemory is one memory of a groupWrites: seq names its row; m is
// its latest state; base, when dirty, is the version its row has in the
// store.
type pendingMemory struct {
	seq   int64
	m     *engram.Memory
	base  int64
	dirty bool
}

func newGroupWrites() *groupWrites {
	return &groupWrites{mems: map[string]*pendingMemory{}, dropped: map[string]bool{}}
}

// view returns the memory id as the feedback sees it: its own change,
// else the group's (nil when neither holds it).
func (t *feedbackTx) view(id string) *pendingMemory {
	if p := t.writes.mems[id]; p != nil {
		return p
	}
	if t.writes.dropped[id] {
		return nil
	}
	return t.shared.mems[id]
}

// merge takes what one feedback did (see feedbackTx) into the group's.
func (g *groupWrites) merge(own *groupWrites) {
	for id := range own.dropped {
		delete(g.mems, id)
	}
	for id, p := range own.mems {
		g.mems[id] = p
	}
	g.credits = append(g.credits, own.credits...)
	g.feedbacks = append(g.feedbacks, own.feedbacks...)
	g.applied = append(g.applied, own.applied...)
}

// flush writes what the group did: its feedback rows and the deletion
// of the pending rows it applied (a statement each), each dirty memory
// once, in id order, from its base version to its last (see
// updateCredited); then the credits.
func (g *groupWrites) flush(db *DB, tx *gorm.DB) error {
	if err := db.insertFeedbacks(tx, g.feedbacks); err != nil {
		return fmt.Errorf("store: save feedback: %w", err)
	}
	if err := deletePending(tx, g.applied); err != nil {
		return err
	}
	if err := db.updateCredited(tx, g.dirty(nil)); err != nil {
		return err
	}
	if err := db.insertCredits(tx, g.credits); err != nil {
		return fmt.Errorf("store: save credits: %w", err)
	}
	return nil
}

// dirty returns the memories of g not yet written, in id order; only
// those of ids when ids is not nil.
func (g *groupWrites) dirty(ids map[string]bool) []creditedRow {
	var out []creditedRow
	for id, p := range g.mems {
		if p.dirty && (ids == nil || ids[id]) {
			out = append(out, creditedRow{seq: p.seq, m: p.m, base: p.base})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].m.ID < out[j].m.ID })
	return out
}

// credit records the memory m a credit moved from p (as the feedback
// sees it), at p's version plus one.
func (t *feedbackTx) credit(p *pendingMemory, m *engram.Memory, now time.Time) {
	m.Version, m.UpdatedAt = p.m.Version+1, now
	cp := *m
	cp.Tags = append([]string(nil), m.Tags...)
	base := p.m.Version
	if p.dirty {
		base = p.base
	}
	t.writes.mems[m.ID] = &pendingMemory{seq: p.seq, m: &cp, base: base, dirty: true}
}

// pendingCredits counts, by memory id of ids, the applied credits of
// rater after since that the group and the feedback hold unwritten.
func (t *feedbackTx) pendingCredits(rater string, ids []string, since time.Time, used map[string]int64) {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	for _, cs := range [][]creditRow{t.shared.credits, t.writes.credits} {
		for _, c := range cs {
			if c.Applied && c.Rater == rater && want[c.MemoryID] && c.CreatedAt.After(since) {
				used[c.MemoryID]++
			}
		}
	}
}

// writeThrough writes the memories of ids that the feedback sees
// unwritten, so that a write that reads and rewrites the row itself (see
// SupersedeMemories) starts from their last state; drop then forgets
// them.
func (t *feedbackTx) writeThrough(ids []string) error {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		if p := t.view(id); p != nil && p.dirty {
			want[id] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	view := &groupWrites{mems: map[string]*pendingMemory{}}
	for id := range want {
		view.mems[id] = t.view(id)
	}
	return t.db.updateCredited(t.tx, view.dirty(want))
}

// drop forgets the memories of ids, written past the cache: the
// feedback and, once it succeeded, the group read them again.
func (t *feedbackTx) drop(ids []string) {
	for _, id := range ids {
		delete(t.writes.mems, id)
		t.writes.dropped[id] = true
	}
}

// withLearned returns m with the learned fields and version of the
// feedback's view of it, if it holds it.
func (t *feedbackTx) withLearned(m *engram.Memory) *engram.Memory {
	p := t.view(m.ID)
	if p == nil {
		return m
	}
	l := p.m
	m.Confidence, m.Reward, m.UpCount, m.DownCount, m.Stability = l.Confidence, l.Reward, l.UpCount, l.DownCount, l.Stability
	m.NeedsRevision, m.ReinforcedAt, m.Learned, m.UpdatedAt, m.Version = l.NeedsRevision, l.ReinforcedAt, l.Learned, l.UpdatedAt, l.Version
	return m
}

// unwritten returns the feedback row of the group, or of the feedback
// itself, that holds the idempotency key, if any, as a list of one.
func (t *feedbackTx) unwritten(key string) []feedbackRow {
	for _, rows := range [][]feedbackRow{t.writes.feedbacks, t.shared.feedbacks} {
		for _, r := range rows {
			if r.IdempotencyKey == key {
				return []feedbackRow{r}
			}
		}
	}
	return nil
}
