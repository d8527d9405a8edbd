package store

import (
	"database/sql"
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
// The credits are read for each rater on the memories the recalls of
// its members injected (pairs: a read of every rater on every memory of
// the group would cost a group of n feedbacks on n recalls n times the
// index lookups of its members' own reads), which the group locked
// before its first member ran (see prefetchGroup): a credit another
// server commits to one of them commits before the group has its lock,
// so the read sees it, as a member's own read under its locks did. A
// member whose memories or window the read does not cover (a vote on
// another memory, a reflection) counts for itself, as a lone feedback
// does.
type groupReads struct {
	raters   []string                   // the raters the group's members name, sorted
	pairs    map[string]map[string]bool // rater → the memories its credits are read on
	postgres bool                       // the store is PostgreSQL (see readPairs)

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
// for a lone one, which reads for itself. postgres: the store is
// PostgreSQL.
func newGroupReads(batch []*feedbackMember, postgres bool) *groupReads {
	if len(batch) < 2 {
		return nil
	}
	r := &groupReads{pairs: map[string]map[string]bool{}, postgres: postgres}
	for _, m := range batch {
		if m.rater == "" {
			continue
		}
		if !slices.Contains(r.raters, m.rater) {
			r.raters = append(r.raters, m.rater)
		}
		if m.recall == nil || m.recallID == "" {
			continue
		}
		ids := r.pairs[m.rater]
		if ids == nil {
			ids = map[string]bool{}
			r.pairs[m.rater] = ids
		}
		for _, id := range groupMemoryIDs([]*feedbackMember{m}) {
			ids[id] = true
		}
	}
	sort.Strings(r.raters)
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
		in, list := inList(tx, "rater", r.raters)
		if err := tx.Where("tenant_id = ? AND "+in, tenant, list).Find(&rows).Error; err != nil {
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
// rater on every memory of ids, in a window that starts no earlier than
// the one read (the members' clocks move on; the first asks first).
func (r *groupReads) countCredits(tx *gorm.DB, tenant, rater string, ids []string, since time.Time) (map[string]int64, bool, error) {
	if r == nil {
		return nil, false, nil
	}
	covered := r.pairs[rater]
	if covered == nil {
		return nil, false, nil
	}
	for _, id := range ids {
		if !covered[id] {
			return nil, false, nil
		}
	}
	if !r.readCredits {
		if err := r.readPairs(tx, tenant, since); err != nil {
			return nil, false, err
		}
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

// readCreditsSQL reads the applied credits of each (rater, memory) pair
// of $1 and $2 (PostgreSQL), an index lookup a pair; the window is
// applied as they are read. OFFSET 0 keeps the lateral subquery from being
// pulled up into a join: pulled up, a planner that believed the tenant
// had a few dozen credits (statistics of a young table) hashed the pairs
// against a scan of all of the tenant's credits, which grows with every
// feedback (10 to 20 ms a group after 2,000 feedbacks on a new database).
// (Joined as a set, or with the window in the statement, it did the same.)
const readCreditsSQL = `SELECT p.rater, c.memory_id, c.created_at FROM unnest($1::text[], $2::text[]) AS p(rater, memory_id)
CROSS JOIN LATERAL (SELECT memory_id, created_at FROM feedback_credits
	WHERE tenant_id = $3 AND memory_id = p.memory_id AND rater = p.rater AND applied OFFSET 0) c`

// readCreditsSQLite reads the applied credits of the raters of $3 on
// the memories of $2 after $4 (SQLite), from the index on (tenant,
// memory, rater, created_at); readPairs keeps those of r's pairs.
const readCreditsSQLite = `SELECT rater, memory_id, created_at FROM feedback_credits
	WHERE tenant_id = ? AND memory_id IN ? AND rater IN ? AND created_at > ? AND applied`

// readPairs reads the credits of r's pairs after since, in one statement.
func (r *groupReads) readPairs(tx *gorm.DB, tenant string, since time.Time) error {
	var raters, ids []string
	for _, rater := range r.raters {
		for id := range r.pairs[rater] {
			raters, ids = append(raters, rater), append(ids, id)
		}
	}
	var rows *sql.Rows
	var err error
	if r.postgres {
		// Through the connection itself: gorm would spread the slices
		// into lists of parameters; the driver sends them as arrays.
		rows, err = tx.Statement.ConnPool.QueryContext(tx.Statement.Context, readCreditsSQL, raters, ids, tenant)
	} else {
		mems := slices.Clone(ids)
		slices.Sort(mems)
		rows, err = tx.Raw(readCreditsSQLite, tenant, slices.Compact(mems), r.raters, since).Rows()
	}
	if err != nil {
		return fmt.Errorf("store: rater credits: %w", err)
	}
	defer rows.Close()
	r.credits = map[string][]creditSeen{}
	for rows.Next() {
		var rater string
		var c creditSeen
		if err := rows.Scan(&rater, &c.memoryID, &c.at); err != nil {
			return fmt.Errorf("store: rater credits: %w", err)
		}
		if c.at.After(since) && r.pairs[rater][c.memoryID] {
			r.credits[rater] = append(r.credits[rater], c)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: rater credits: %w", err)
	}
	r.since, r.readCredits = since, true
	return nil
}
