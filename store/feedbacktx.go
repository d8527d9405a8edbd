package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// RunFeedback runs fn, one feedback's workflow, in a write transaction of
// the tenant in ctx and returns its answer once that is committed. The
// store decides nothing of what the feedback means: fn does, through the
// engram.FeedbackTx it is given; the store keeps its writes atomic.
//
// Concurrent feedbacks of a tenant share one transaction (see
// feedbackGroups): fn may run more than once (a lost race is run again
// on fresh data, a group with a failed member written again) and must
// keep no state of its own between runs. recallID names the recall the feedback targets
// directly ("" for none): a recall this process still queues is claimed
// and written in the feedback's transaction, and a known recall is read
// once, before (see readyRecall). rater names the rater fn will credit
// as ("" when not known), for its group to read that rater's reputation
// and credits once with the others' (see groupReads). ENOTFOUND for a
// recall outside the tenant; fn's errors are its own.
func (db *DB) RunFeedback(ctx context.Context, recallID, rater string, fn engram.FeedbackFunc) (*engram.FeedbackResult, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	claimed, rec, err := db.readyRecall(ctx, tenant, recallID)
	if err != nil {
		return nil, err
	}
	if rec != nil {
		rec.items()
	}
	m := &feedbackMember{ctx: ctx, recallID: recallID, rater: rater, fn: fn, claimed: claimed, recall: rec, done: make(chan struct{})}
	db.feedbacks.submit(tenant, m)
	return m.res, m.err
}

// feedbackTx implements engram.FeedbackTx for one run of one feedback in
// its group's transaction. It remembers the rows it locked (their seq and
// version as read), so that its writes address them without reading them
// again, and what the feedback adds to helpfulness and reputation (own),
// which its group takes once the feedback succeeded.
type feedbackTx struct {
	db       *DB
	tx       *gorm.DB
	tenant   string
	id       string
	now      time.Time
	recallID string
	recall   *recallRow     // the recall recallID names, when read before
	group    *groupLearning // what the group's earlier feedbacks added
	help     *helpReads     // the memory_help rows the group has read
	shared   *groupWrites   // what the group's earlier feedbacks wrote
	writes   *groupWrites   // what this feedback writes
	own      *groupLearning // what this feedback adds
	reads    *groupReads    // what the group reads once for its members (nil: none)

	answers     map[string]int64 // interaction seq, by id
	reflections map[string]int64 // reflection seq, by id
}

var _ engram.FeedbackTx = (*feedbackTx)(nil)

func (db *DB) newFeedbackTx(tx *gorm.DB, tenant string, m *feedbackMember, g *groupLearning, help *helpReads, shared *groupWrites) *feedbackTx {
	id := m.pending
	if id == "" {
		id = newFeedbackID()
	}
	return &feedbackTx{db: db, tx: tx, tenant: tenant, id: id, now: db.now().UTC(), recallID: m.recallID, recall: m.recall,
		group: g, help: help, shared: shared, writes: newGroupWrites(), own: newGroupLearning(), answers: map[string]int64{}, reflections: map[string]int64{}}
}

// FeedbackID implements engram.FeedbackTx.
func (t *feedbackTx) FeedbackID() string { return t.id }

// Now implements engram.FeedbackTx.
func (t *feedbackTx) Now() time.Time { return t.now }

// FindFeedbackResult implements engram.FeedbackTx.
// A feedback of the group not yet written (see SaveFeedback) counts too.
func (t *feedbackTx) FindFeedbackResult(_ context.Context, key string) (*engram.FeedbackResult, error) {
	prior := t.unwritten(key)
	if len(prior) == 0 {
		if err := t.tx.Where("tenant_id = ? AND idempotency_key = ?", t.tenant, key).Limit(1).Find(&prior).Error; err != nil {
			return nil, fmt.Errorf("store: idempotency: %w", err)
		}
	}
	if len(prior) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "no feedback with idempotency key %q", key)
	}
	var res engram.FeedbackResult
	if err := json.Unmarshal([]byte(prior[0].Result), &res); err != nil {
		return nil, fmt.Errorf("store: stored feedback result: %w", err)
	}
	return &res, nil
}

// FindAnswer implements engram.FeedbackTx.
func (t *feedbackTx) FindAnswer(_ context.Context, id string) (*engram.Answer, error) {
	var rows []interactionRow
	if err := t.tx.Where("tenant_id = ? AND id = ?", t.tenant, id).Limit(1).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: find interaction: %w", err)
	}
	if len(rows) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "interaction %q not found", id)
	}
	t.answers[id] = rows[0].Seq
	return rows[0].toAnswer(), nil
}

// toAnswer is the interaction with its category and latest judgement.
func (r *interactionRow) toAnswer() *engram.Answer {
	a := &engram.Answer{Interaction: *r.toInteraction(), Category: r.Category, LastFeedbackID: r.LastFeedbackID}
	if r.LastSignal != nil {
		a.Last = &engram.Judgement{Signal: *r.LastSignal, Rating: r.LastKind == "rating"}
	}
	return a
}

// FindRecallScores implements engram.FeedbackTx; the recall the feedback
// names is read once, before its transaction (see RunFeedback).
func (t *feedbackTx) FindRecallScores(_ context.Context, id string) (*engram.RecallScores, error) {
	rec := t.recall
	if rec == nil || id != t.recallID {
		var err error
		if rec, err = t.db.findRecall(t.tx, t.tenant, id); err != nil {
			return nil, err
		}
	}
	return rec.scores(), nil
}

// FindMemory implements engram.FeedbackTx, with what the group's
// credits did to the memory so far.
func (t *feedbackTx) FindMemory(_ context.Context, id string) (*engram.Memory, error) {
	row, err := findRow(t.tx, t.tenant, "id = ?", id)
	if err != nil {
		return nil, err
	}
	return t.withLearned(row.toMemory()), nil
}

// LockMemories implements engram.FeedbackTx: the memories the group has
// read (and locked) are taken as its credits left them, the others read
// and locked in one statement, by id alone (rows of other tenants are
// dropped after the read), and kept for the group once the feedback
// succeeds.
func (t *feedbackTx) LockMemories(_ context.Context, ids []string) ([]*engram.Memory, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	ids = append([]string(nil), ids...)
	sort.Strings(ids)
	var missing []string
	for _, id := range ids {
		if t.view(id) == nil {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		// The feedback's own until it succeeds: rolled back to its
		// savepoint, it gives up the rows' locks (PostgreSQL) too.
		if _, err := t.db.lockCredited(t.tx, t.tenant, missing, t.writes); err != nil {
			return nil, err
		}
	}
	out := make([]*engram.Memory, 0, len(ids))
	for _, id := range ids {
		if p := t.view(id); p != nil {
			cp := *p.m
			cp.Tags = append([]string(nil), p.m.Tags...)
			out = append(out, &cp)
		}
	}
	return out, nil
}

// CountCredits implements engram.FeedbackTx in one statement, or from
// the group's one read (groupReads). Counted after LockMemories, under
// the memories' row locks, concurrent votes of one rater see each other
// and the cap holds.
func (t *feedbackTx) CountCredits(_ context.Context, rater string, ids []string, since time.Time) (map[string]int64, error) {
	used, ok, err := t.reads.countCredits(t.tx, t.tenant, rater, ids, since)
	if err != nil {
		return nil, err
	}
	if ok {
		t.pendingCredits(rater, ids, since, used)
		return used, nil
	}
	var counts []struct {
		MemoryID string
		N        int64
	}
	in, list := inList(t.tx, "memory_id", ids)
	if err := t.tx.Raw(`SELECT memory_id, COUNT(*) AS n FROM feedback_credits
		WHERE tenant_id = ? AND `+in+` AND rater = ? AND applied AND created_at > ? GROUP BY memory_id`,
		t.tenant, list, rater, since).Find(&counts).Error; err != nil {
		return nil, fmt.Errorf("store: rater credits: %w", err)
	}
	used = make(map[string]int64, len(counts))
	for _, c := range counts {
		used[c.MemoryID] = c.N
	}
	t.pendingCredits(rater, ids, since, used)
	return used, nil
}

// WriteCredits implements engram.FeedbackTx without a statement: the
// moved memories and the credits wait in the feedback's groupWrites, for
// the group to write each memory once and all credits in one statement
// at its end (groupWrites.flush); the delta events go with the group's
// events.
func (t *feedbackTx) WriteCredits(ctx context.Context, w engram.CreditWrite) error {
	now := t.db.now().UTC().Truncate(time.Microsecond)
	for _, m := range w.Moved {
		p := t.view(m.ID)
		if p == nil {
			return fmt.Errorf("store: credit of memory %s, which was not locked", m.ID)
		}
		before := p.m
		t.credit(p, m, now)
		if err := t.db.appendDelta(ctx, t.tenant, m.ID, m.Version, engram.DeltaOf(w.FeedbackID, before, m)); err != nil {
			return err
		}
	}
	for _, c := range w.Credits {
		t.writes.credits = append(t.writes.credits, creditRow{FeedbackID: w.FeedbackID, TenantID: t.tenant, MemoryID: c.ID, Rater: w.Rater,
			Signal: w.Signal, Applied: c.Applied, CreatedAt: w.At})
	}
	return nil
}

// FindReputation implements engram.FeedbackTx, with what the group's
// earlier feedbacks add to it; read once for the group (groupReads) when
// the feedback named its rater.
func (t *feedbackTx) FindReputation(_ context.Context, rater string) (engram.Reputation, error) {
	row, ok, err := t.reads.reputation(t.tx, t.tenant, rater)
	if err != nil {
		return engram.Reputation{}, err
	}
	if !ok {
		var reps []reputationRow
		if err := t.tx.Where("tenant_id = ? AND rater = ?", t.tenant, rater).Limit(1).Find(&reps).Error; err != nil {
			return engram.Reputation{}, fmt.Errorf("store: rater reputation: %w", err)
		}
		if len(reps) == 1 {
			row = reps[0]
		}
	}
	rep := engram.Reputation{Agree: row.Agree, Disagree: row.Disagree, Votes: row.Votes}
	if d := t.group.reps[rater]; d != nil {
		rep.Agree, rep.Disagree, rep.Votes = rep.Agree+d.Agree, rep.Disagree+d.Disagree, rep.Votes+d.Votes
	}
	return rep, nil
}

// FindHelpEvidence implements engram.FeedbackTx, with what the group's
// earlier feedbacks add to it.
func (t *feedbackTx) FindHelpEvidence(_ context.Context, mems []*engram.Memory) (map[string]engram.HelpEvidence, error) {
	return t.help.evidence(t.tx, t.tenant, mems, t.group.help)
}

// AddLearning implements engram.FeedbackTx: the sums wait in the
// feedback's own groupLearning until the feedback succeeds.
func (t *feedbackTx) AddLearning(help map[string]engram.Helpfulness, rater string, rep engram.Reputation) {
	for id, h := range help {
		d := t.own.helpRow(id)
		d.add(&helpRow{Good: h.Good, Bad: h.Bad, WithN: h.With.N, WithSum: h.With.Sum, WithSq: h.With.Sq,
			WithoutN: h.Without.N, WithoutSum: h.Without.Sum, WithoutSq: h.Without.Sq})
	}
	r := t.own.reps[rater]
	if r == nil {
		r = &reputationRow{Rater: rater}
		t.own.reps[rater] = r
	}
	r.Agree += rep.Agree
	r.Disagree += rep.Disagree
	r.Votes += rep.Votes
	if t.now.After(t.own.at) {
		t.own.at = t.now
	}
}

// LockReflection implements engram.FeedbackTx.
func (t *feedbackTx) LockReflection(_ context.Context, id string) (*engram.Reflection, error) {
	var rows []reflectionRow
	if err := t.db.dialect.forUpdate(t.tx).Where("tenant_id = ? AND id = ?", t.tenant, id).Limit(1).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: find reflection: %w", err)
	}
	if len(rows) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "reflection %q not found", id)
	}
	t.reflections[id] = rows[0].Seq
	return &engram.Reflection{ID: id, UpCount: rows[0].UpCount, DownCount: rows[0].DownCount}, nil
}

// UpdateReflectionVotes implements engram.FeedbackTx for a reflection
// LockReflection read.
func (t *feedbackTx) UpdateReflectionVotes(_ context.Context, id string, up, down int64) error {
	seq, ok := t.reflections[id]
	if !ok {
		return fmt.Errorf("store: votes of reflection %s, which was not locked", id)
	}
	if err := t.tx.Model(&reflectionRow{}).Where("seq = ?", seq).
		Updates(map[string]any{"up_count": up, "down_count": down}).Error; err != nil {
		return fmt.Errorf("store: credit reflection: %w", err)
	}
	return nil
}

// LockAnswers implements engram.FeedbackTx in one statement.
func (t *feedbackTx) LockAnswers(_ context.Context, groupKey string, limit int) error {
	var locked []int64
	if err := t.db.dialect.forUpdate(t.tx.Model(&interactionRow{})).Where("tenant_id = ? AND group_key = ?", t.tenant, groupKey).
		Order("seq DESC").Limit(limit).Pluck("seq", &locked).Error; err != nil {
		return fmt.Errorf("store: lock regenerations: %w", err)
	}
	return nil
}

// UpdateJudgement implements engram.FeedbackTx for an answer FindAnswer
// read.
func (t *feedbackTx) UpdateJudgement(_ context.Context, interactionID string, j engram.Judgement, feedbackID string) error {
	seq, ok := t.answers[interactionID]
	if !ok {
		return fmt.Errorf("store: judgement of interaction %s, which was not read", interactionID)
	}
	kind := "thumb"
	if j.Rating {
		kind = "rating"
	}
	if err := t.tx.Model(&interactionRow{}).Where("seq = ?", seq).
		Updates(map[string]any{"last_signal": j.Signal, "last_kind": kind, "last_feedback_id": feedbackID}).Error; err != nil {
		return fmt.Errorf("store: update interaction: %w", err)
	}
	return nil
}

// FindJudgedAnswers implements engram.FeedbackTx in one statement.
func (t *feedbackTx) FindJudgedAnswers(_ context.Context, groupKey, except string, limit int) ([]*engram.Answer, error) {
	var peers []interactionRow
	if err := t.tx.Where("tenant_id = ? AND group_key = ? AND id <> ? AND last_signal IS NOT NULL", t.tenant, groupKey, except).
		Order("seq DESC").Limit(limit).Find(&peers).Error; err != nil {
		return nil, fmt.Errorf("store: find regenerations: %w", err)
	}
	out := make([]*engram.Answer, len(peers))
	for i := range peers {
		out[i] = peers[i].toAnswer()
	}
	return out, nil
}

// SavePair implements engram.FeedbackTx: a count of the dedupe key, then
// the insert.
func (t *feedbackTx) SavePair(ctx context.Context, p *engram.Pair, dedupeKey string) (bool, error) {
	var n int64
	if err := t.tx.Model(&pairRow{}).Where("tenant_id = ? AND dedupe_key = ?", t.tenant, dedupeKey).Count(&n).Error; err != nil {
		return false, fmt.Errorf("store: pair dedupe: %w", err)
	}
	if n > 0 {
		return false, nil
	}
	if p.UserID == "" {
		p.UserID = t.user(ctx)
	}
	row := pairRow{ID: newID("pair"), TenantID: t.tenant, UserID: p.UserID, Kind: p.Kind, DedupeKey: dedupeKey, Prompt: p.Prompt, Chosen: p.Chosen,
		Rejected: p.Rejected, Margin: p.Margin, Category: p.Category, ChosenInteractionID: p.ChosenInteractionID,
		RejectedInteractionID: p.RejectedInteractionID, FeedbackIDs: mustJSON(p.FeedbackIDs),
		ChosenMemories: mustJSON(p.ChosenMemories), RejectedMemories: mustJSON(p.RejectedMemories), CreatedAt: p.CreatedAt}
	if len(p.Messages) > 0 {
		s := mustJSON(p.Messages)
		row.Messages = &s
	}
	if err := t.tx.Create(&row).Error; err != nil {
		return false, fmt.Errorf("store: save pair: %w", err)
	}
	p.ID = row.ID
	return true, nil
}

// CreateMemory implements engram.FeedbackTx with the store's write rules.
func (t *feedbackTx) CreateMemory(ctx context.Context, m *engram.Memory) (*engram.CreateResult, error) {
	t.db.rules.ApplyDefaults(m)
	if err := t.db.rules.Validate(m); err != nil {
		return nil, engram.Errorf(engram.EINVALID, "%s", engram.ErrorMessage(err))
	}
	results := make([]*engram.CreateResult, 1)
	if err := t.db.insertBatch(ctx, t.tx, t.tenant, []*engram.Memory{m}, results); err != nil {
		return nil, err
	}
	return results[0], nil
}

// SupersedeMemories implements engram.FeedbackTx, in id order (the one
// lock order of every writer), after writing what the group's credits did
// to those memories (see writeThrough).
func (t *feedbackTx) SupersedeMemories(ctx context.Context, ids []string, by string) error {
	ids = append([]string(nil), ids...)
	sort.Strings(ids)
	if err := t.writeThrough(ids); err != nil {
		return err
	}
	defer t.drop(ids)
	for _, id := range ids {
		if _, err := t.db.mutateTx(ctx, t.tx, t.tenant, "id = ?", id, nil, engram.ActionFeedback, func(_ *gorm.DB, m *engram.Memory) (bool, error) {
			if !m.Valid || (m.NeedsRevision && m.SupersededBy == by) {
				return false, nil
			}
			m.NeedsRevision, m.SupersededBy = true, by
			return true, nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// SaveFeedback implements engram.FeedbackTx: the feedback row, with its
// result, waits in the feedback's groupWrites, for the group to write
// the rows of all its feedbacks in one statement (groupWrites.flush).
func (t *feedbackTx) SaveFeedback(ctx context.Context, in engram.FeedbackInput, res *engram.FeedbackResult) error {
	stored, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("store: feedback result: %w", err)
	}
	user := in.UserID
	if user == "" {
		user = t.user(ctx)
	}
	fb := feedbackRow{ID: t.id, TenantID: t.tenant, UserID: user, InteractionID: in.InteractionID, RecallID: in.RecallID, MemoryID: in.MemoryID,
		Thumb: in.Thumb, Rating: in.Rating, Signal: res.Signal, Reason: in.Reason, Correction: in.Correction, Rater: in.Rater,
		IdempotencyKey: in.IdempotencyKey, Result: string(stored), CreatedAt: t.now}
	t.writes.feedbacks = append(t.writes.feedbacks, fb)
	return nil
}

// user is the end user a feedback and its pair belong to: the request's,
// else the user of the recall it rates.
func (t *feedbackTx) user(ctx context.Context) string {
	if u := engram.UserFromContext(ctx); u != "" {
		return u
	}
	if t.recall != nil {
		return t.recall.UserID
	}
	return ""
}
