package store

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// groupReads reads once, for all the members of a feedback group, the
// two rows each member used to read for itself: its rater's reputation
// (FindReputation) and its rater's applied credits on the memories it
// credits (CountCredits, the rater's cap). Each member names its rater
// when it is submitted (RunFeedback); the first member that needs one
// of them reads it for every rater of the group, and the others take it
// from here, with what the group's earlier members added on top (as
// before: groupLearning, groupWrites.credits).
//
// The credits are read for the memories the group's recalls injected,
// which on PostgreSQL the group locked before its first member ran (see
// lockGroupMemories): a credit another server commits to one of them
// commits before the group has its lock, so the read sees it, as a
// member's own read under its locks did. A member whose memories or
// window the read does not cover (a vote on another memory, a
// reflection) reads as before. A lone feedback reads as before.
type groupReads struct {
	raters []string        // the raters the group's members name, sorted
	ids    map[string]bool // the memories whose credits are read

	reps     map[string]reputationRow // as read, by rater; none: no row
	readReps bool

	credits     map[string][]creditSeen // applied credits after since, by rater
	since       time.Time
	readCredits bool
}

// creditSeen is one applied credit as groupReads read it.
type creditSeen struct {
	memoryID string
	at       time.Time
}

// newGroupReads returns the reads of a group of several members; nil
// for a lone one, which reads for itself.
func newGroupReads(batch []*feedbackMember) *groupReads {
	if len(batch) < 2 {
		return nil
	}
	r := &groupReads{ids: map[string]bool{}}
	for _, m := range batch {
		if m.rater != "" && !slices.Contains(r.raters, m.rater) {
			r.raters = append(r.raters, m.rater)
		}
	}
	sort.Strings(r.raters)
	for _, id := range groupMemoryIDs(batch) {
		r.ids[id] = true
	}
	return r
}

// groupMemoryIDs returns, in id order, the memories the recalls of the
// group's feedbacks injected (reflections aside).
func groupMemoryIDs(batch []*feedbackMember) []string {
	seen := map[string]bool{}
	var ids []string
	for _, m := range batch {
		if m.recall == nil || m.recallID == "" {
			continue
		}
		for _, ref := range m.recall.memoryRefs() {
			if !seen[ref.ID] && !strings.HasPrefix(ref.ID, engram.ReflectionPrefix) {
				seen[ref.ID] = true
				ids = append(ids, ref.ID)
			}
		}
	}
	sort.Strings(ids)
	return ids
}

// reputation returns rater's reputation row as the group read it, and
// whether r covers rater.
func (r *groupReads) reputation(tx *gorm.DB, tenant, rater string) (reputationRow, bool, error) {
	if r == nil || !slices.Contains(r.raters, rater) {
		return reputationRow{}, false, nil
	}
	if !r.readReps {
		var rows []reputationRow
		if err := tx.Where("tenant_id = ? AND rater IN ?", tenant, r.raters).Find(&rows).Error; err != nil {
			return reputationRow{}, false, fmt.Errorf("store: rater reputation: %w", err)
		}
		r.reps = make(map[string]reputationRow, len(rows))
		for _, row := range rows {
			r.reps[row.Rater] = row
		}
		r.readReps = true
	}
	return r.reps[rater], true, nil
}

// countCredits counts, by memory of ids, rater's applied credits after
// since as the group read them, and whether r covers the question: the
// rater, every memory, and a window that starts no earlier than the one
// read (the members' clocks move on; the first asks first).
func (r *groupReads) countCredits(tx *gorm.DB, tenant, rater string, ids []string, since time.Time) (map[string]int64, bool, error) {
	if r == nil || !slices.Contains(r.raters, rater) {
		return nil, false, nil
	}
	for _, id := range ids {
		if !r.ids[id] {
			return nil, false, nil
		}
	}
	if !r.readCredits {
		all := make([]string, 0, len(r.ids))
		for id := range r.ids {
			all = append(all, id)
		}
		sort.Strings(all)
		var rows []struct {
			Rater     string
			MemoryID  string
			CreatedAt time.Time
		}
		if err := tx.Raw(`SELECT rater, memory_id, created_at FROM feedback_credits
			WHERE tenant_id = ? AND memory_id IN ? AND rater IN ? AND applied AND created_at > ?`,
			tenant, all, r.raters, since).Scan(&rows).Error; err != nil {
			return nil, false, fmt.Errorf("store: rater credits: %w", err)
		}
		r.credits = map[string][]creditSeen{}
		for _, row := range rows {
			r.credits[row.Rater] = append(r.credits[row.Rater], creditSeen{memoryID: row.MemoryID, at: row.CreatedAt})
		}
		r.since, r.readCredits = since, true
	}
	if since.Before(r.since) {
		return nil, false, nil
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	used := map[string]int64{}
	for _, c := range r.credits[rater] {
		if want[c.memoryID] && c.at.After(since) {
			used[c.memoryID]++
		}
	}
	return used, true, nil
}
