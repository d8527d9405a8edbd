package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// helpRow is one memory's helpfulness evidence (memory_help); the row of
// memory id engram.AnswersKey ("") holds the tenant's judged answers.
// Feedback only ever adds to it (see groupLearning.write), so concurrent
// feedbacks never lose each other's evidence.
type helpRow struct {
	TenantID   string
	MemoryID   string
	Good       float64
	Bad        float64
	WithN      int64
	WithSum    float64
	WithSq     float64
	WithoutN   int64
	WithoutSum float64
	WithoutSq  float64
	UpdatedAt  time.Time
}

func (helpRow) TableName() string { return "memory_help" }

func (r *helpRow) help() engram.Helpfulness {
	return engram.Helpfulness{Good: r.Good, Bad: r.Bad,
		With:    engram.Outcomes{N: r.WithN, Sum: r.WithSum, Sq: r.WithSq},
		Without: engram.Outcomes{N: r.WithoutN, Sum: r.WithoutSum, Sq: r.WithoutSq}}
}

// reputationRow is one rater's agreement with other raters' evidence.
type reputationRow struct {
	TenantID  string
	Rater     string
	Agree     float64
	Disagree  float64
	Votes     int64
	UpdatedAt time.Time
}

func (reputationRow) TableName() string { return "rater_reputation" }

// loadHelp returns the evidence rows of keys (memory ids and origin keys)
// and the tenant's totals of judged answers and of all memories, with
// what pending (a group's feedbacks not yet written, or nil) adds to them.
func loadHelp(g *gorm.DB, tenant string, keys []string, pending map[string]*helpRow) (map[string]engram.Helpfulness, error) {
	return (*helpReads)(nil).load(g, tenant, keys, pending)
}

// load is loadHelp, reading through c (nil: no cache).
func (c *helpReads) load(g *gorm.DB, tenant string, keys []string, pending map[string]*helpRow) (map[string]engram.Helpfulness, error) {
	keys = append([]string{engram.AnswersKey, engram.AllOrigins}, keys...)
	byID, err := c.rows(g, tenant, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string]engram.Helpfulness, len(byID))
	for _, k := range keys {
		r, d := byID[k], pending[k]
		switch {
		case d != nil:
			var sum helpRow
			if r != nil {
				sum = *r
			}
			sum.add(d)
			out[k] = sum.help()
		case r != nil:
			out[k] = r.help()
		}
	}
	return out, nil
}

// add adds d's evidence to r's.
func (r *helpRow) add(d *helpRow) {
	r.Good += d.Good
	r.Bad += d.Bad
	r.WithN += d.WithN
	r.WithSum += d.WithSum
	r.WithSq += d.WithSq
	r.WithoutN += d.WithoutN
	r.WithoutSum += d.WithoutSum
	r.WithoutSq += d.WithoutSq
}

// helpEvidence loads the evidence of mems, by id: their own, their
// origins', and the tenant's totals, with what pending adds to them (see
// loadHelp).
func helpEvidence(g *gorm.DB, tenant string, mems []*engram.Memory, pending map[string]*helpRow) (map[string]engram.HelpEvidence, error) {
	return (*helpReads)(nil).evidence(g, tenant, mems, pending)
}

// evidence is helpEvidence, reading through c (nil: no cache).
func (c *helpReads) evidence(g *gorm.DB, tenant string, mems []*engram.Memory, pending map[string]*helpRow) (map[string]engram.HelpEvidence, error) {
	keys, origins, features := c.evidenceKeys(mems)
	rows, err := c.load(g, tenant, keys, pending)
	if err != nil {
		return nil, err
	}
	main, err := c.mainOrigin(g, tenant, pending)
	if err != nil {
		return nil, err
	}
	out := make(map[string]engram.HelpEvidence, len(mems))
	for i, m := range mems {
		e := engram.HelpEvidence{Memory: rows[m.ID], Origin: rows[origins[i]], Origins: rows[engram.AllOrigins], Main: main,
			Answers: rows[engram.AnswersKey], Kinds: rows[engram.AllFeatures], OriginKey: origins[i], FeatureKeys: features[i]}
		for _, f := range features[i] {
			if h, ok := rows[f]; ok {
				if e.Features == nil {
					e.Features = make(map[string]engram.Helpfulness, len(features[i]))
				}
				e.Features[f] = h
			}
		}
		out[m.ID] = e
	}
	return out, nil
}

// evidenceKeys returns the memory_help keys evidence reads for mems
// (besides those load adds), and each memory's origin and features.
func (c *helpReads) evidenceKeys(mems []*engram.Memory) (keys, origins []string, features [][]string) {
	keys = make([]string, 0, 2*len(mems)+1)
	keys = append(keys, engram.AllFeatures)
	origins = make([]string, len(mems))
	features = make([][]string, len(mems))
	seen := map[string]bool{}
	for i, m := range mems {
		k := c.kindsOf(m)
		origins[i], features[i] = k.origin, k.features
		keys = append(keys, m.ID)
		for _, k := range append([]string{origins[i]}, features[i]...) {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys, origins, features
}

// prefetch reads into c, in one statement and the main origin's, the
// rows evidence reads for mems, so that the group's feedbacks judging
// any of them read nothing themselves.
func (c *helpReads) prefetch(g *gorm.DB, tenant string, mems []*engram.Memory) error {
	keys, _, _ := c.evidenceKeys(mems)
	if _, err := c.load(g, tenant, keys, nil); err != nil {
		return err
	}
	_, err := c.main(g, tenant)
	return err
}

// mainOrigin returns the evidence of the tenant's main origin: of the
// origin rows (keys engram.OriginPrefix + hex, a range of the primary
// key; not AllOrigins), the one with the most evidence, good and bad, with
// what pending adds to it. Which origin is the main one is read from the
// written rows: a group's pending feedbacks may add to it, never change it.
func (c *helpReads) mainOrigin(g *gorm.DB, tenant string, pending map[string]*helpRow) (engram.Helpfulness, error) {
	main, err := c.main(g, tenant)
	if err != nil || main == nil {
		return engram.Helpfulness{}, err
	}
	r := *main
	if d := pending[r.MemoryID]; d != nil {
		r.add(d)
	}
	return r.help(), nil
}

// originsEnd is the first key after every origin key: OriginPrefix with
// its last byte (':') plus one.
var originsEnd = engram.OriginPrefix[:len(engram.OriginPrefix)-1] + ";"

// FindHelpfulness returns the helpfulness evidence of the given memories
// of the tenant, by id, for scoring a recall.
func (db *DB) FindHelpfulness(ctx context.Context, mems []*engram.Memory) (map[string]engram.HelpEvidence, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	return helpEvidence(db.r.WithContext(ctx), tenant, mems, nil)
}

// MemoryHelpfulness returns one memory's helpfulness evidence. ENOTFOUND
// for a memory outside the tenant.
func (db *DB) MemoryHelpfulness(ctx context.Context, id string) (engram.HelpEvidence, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return engram.HelpEvidence{}, err
	}
	g := db.r.WithContext(ctx)
	row, err := findRow(g, tenant, "id = ?", id)
	if err != nil {
		return engram.HelpEvidence{}, err
	}
	m := row.toMemory()
	help, err := helpEvidence(g, tenant, []*engram.Memory{m}, nil)
	if err != nil {
		return engram.HelpEvidence{}, err
	}
	return help[m.ID], nil
}

// groupLearning is what the feedbacks of one group transaction have added
// so far to memory_help and rater_reputation: the rows every feedback of
// a tenant adds to (the tenant-wide totals, the origins') are written
// once, at the group's end (write), rather than by each feedback. The
// feedbacks' reads of those rows (feedbackTx) add it to what they
// find, so each sees its predecessors in the group as if they had
// written.
type groupLearning struct {
	help map[string]*helpRow       // by memory id
	reps map[string]*reputationRow // by rater: Agree, Disagree and Votes to add
	at   time.Time                 // the newest feedback's time
}

func newGroupLearning() *groupLearning {
	return &groupLearning{help: map[string]*helpRow{}, reps: map[string]*reputationRow{}}
}

// helpRow returns the group's row of id, made when missing.
func (g *groupLearning) helpRow(id string) *helpRow {
	r := g.help[id]
	if r == nil {
		r = &helpRow{MemoryID: id}
		g.help[id] = r
	}
	return r
}

// merge takes what one feedback added (see feedbackTx.AddLearning) into
// the group's.
func (g *groupLearning) merge(own *groupLearning) {
	for id, d := range own.help {
		g.helpRow(id).add(d)
	}
	for rater, d := range own.reps {
		r := g.reps[rater]
		if r == nil {
			r = &reputationRow{Rater: rater}
			g.reps[rater] = r
		}
		r.Agree += d.Agree
		r.Disagree += d.Disagree
		r.Votes += d.Votes
	}
	if own.at.After(g.at) {
		g.at = own.at
	}
}

// write adds the group's learning to the store: memory_help, then the
// raters' reputations, each in key order (one lock order for every
// writer on PostgreSQL).
func (g *groupLearning) write(db *DB, tx *gorm.DB, tenant string) error {
	ids := make([]string, 0, len(g.help))
	for id := range g.help {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	help := make([][]any, len(ids))
	for i, id := range ids {
		d := g.help[id]
		help[i] = []any{tenant, id, d.Good, d.Bad, d.WithN, d.WithSum, d.WithSq, d.WithoutN, d.WithoutSum, d.WithoutSq, g.at}
	}
	sum := func(table string, cols ...string) string {
		parts := make([]string, len(cols))
		for i, c := range cols {
			parts[i] = c + " = " + table + "." + c + " + excluded." + c
		}
		return strings.Join(parts, ", ")
	}
	if err := insertRows(tx, `INSERT INTO memory_help (tenant_id, memory_id, good, bad, with_n, with_sum, with_sq, without_n, without_sum, without_sq, updated_at)`,
		` ON CONFLICT (tenant_id, memory_id) DO UPDATE SET `+
			sum("memory_help", "good", "bad", "with_n", "with_sum", "with_sq", "without_n", "without_sum", "without_sq")+`, updated_at = excluded.updated_at`,
		help); err != nil {
		return fmt.Errorf("store: add helpfulness: %w", err)
	}
	raters := make([]string, 0, len(g.reps))
	for r := range g.reps {
		raters = append(raters, r)
	}
	sort.Strings(raters)
	reps := make([][]any, len(raters))
	for i, rater := range raters {
		d := g.reps[rater]
		reps[i] = []any{tenant, rater, d.Agree, d.Disagree, d.Votes, g.at}
	}
	if err := insertRows(tx, `INSERT INTO rater_reputation (tenant_id, rater, agree, disagree, votes, updated_at)`,
		` ON CONFLICT (tenant_id, rater) DO UPDATE SET `+sum("rater_reputation", "agree", "disagree", "votes")+`, updated_at = excluded.updated_at`,
		reps); err != nil {
		return fmt.Errorf("store: rater reputation: %w", err)
	}
	return nil
}

// FindReputations returns the reputation of up to limit raters of the
// tenant in ctx, those that disagreed most with other raters' evidence
// first.
func (db *DB) FindReputations(ctx context.Context, limit int) ([]*engram.RaterReputation, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, engram.Errorf(engram.EINVALID, "limit must be positive")
	}
	var rows []reputationRow
	if err := db.r.WithContext(ctx).Where("tenant_id = ?", tenant).
		Order("disagree - agree DESC, votes DESC, rater").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: rater reputations: %w", err)
	}
	out := make([]*engram.RaterReputation, len(rows))
	for i, r := range rows {
		out[i] = &engram.RaterReputation{Rater: r.Rater,
			Reputation: engram.Reputation{Agree: r.Agree, Disagree: r.Disagree, Votes: r.Votes}, UpdatedAt: r.UpdatedAt.UTC()}
	}
	return out, nil
}
