package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

type interactionRow struct {
	Seq            int64 `gorm:"primaryKey;autoIncrement"`
	ID             string
	TenantID       string
	UserID         string
	Prompt         string
	Messages       *string
	Response       string
	RecallID       string
	SessionID      string
	TurnID         string
	Model          string
	GroupKey       string
	Category       string
	LastSignal     *float64
	LastKind       string
	LastFeedbackID string
	CreatedAt      time.Time
}

func (interactionRow) TableName() string { return "interactions" }

func (r *interactionRow) toInteraction() *engram.Interaction {
	in := &engram.Interaction{ID: r.ID, UserID: r.UserID, Prompt: r.Prompt, Response: r.Response, RecallID: r.RecallID, SessionID: r.SessionID,
		TurnID: r.TurnID, Model: r.Model, GroupKey: r.GroupKey, CreatedAt: r.CreatedAt.UTC()}
	if r.Messages != nil {
		_ = json.Unmarshal([]byte(*r.Messages), &in.Messages)
	}
	return in
}

type feedbackRow struct {
	Seq            int64 `gorm:"primaryKey;autoIncrement"`
	ID             string
	TenantID       string
	UserID         string
	InteractionID  string
	RecallID       string
	MemoryID       string
	Thumb          string
	Rating         int
	Signal         float64
	Reason         string
	Correction     string
	Rater          string
	IdempotencyKey string
	Result         string
	CreatedAt      time.Time
}

func (feedbackRow) TableName() string { return "feedback" }

type creditRow struct {
	FeedbackID string
	TenantID   string
	MemoryID   string
	Rater      string
	Signal     float64
	Applied    bool
	CreatedAt  time.Time
}

func (creditRow) TableName() string { return "feedback_credits" }

type pairRow struct {
	Seq                   int64 `gorm:"primaryKey;autoIncrement"`
	ID                    string
	TenantID              string
	UserID                string
	Kind                  string
	DedupeKey             string
	Prompt                string
	Messages              *string
	Chosen                string
	Rejected              string
	Margin                float64
	Category              string
	ChosenInteractionID   string
	RejectedInteractionID string
	FeedbackIDs           string `gorm:"column:feedback_ids"`
	ChosenMemories        string
	RejectedMemories      string
	CreatedAt             time.Time
}

func (pairRow) TableName() string { return "pairs" }

// groupKey gathers the regenerations of one turn: the session and turn
// id when the client sends a turn id, else the session and the prompt
// with white space folded.
func groupKey(in *engram.Interaction) string {
	if in.TurnID != "" {
		return "turn:" + in.SessionID + "\x1f" + in.TurnID
	}
	prompt := strings.Join(strings.Fields(in.Prompt), " ")
	if len(in.Messages) > 0 {
		folded := make([]engram.Message, len(in.Messages))
		for i, m := range in.Messages {
			folded[i] = engram.Message{Role: m.Role, Content: strings.Join(strings.Fields(m.Content), " ")}
		}
		b, _ := json.Marshal(folded)
		prompt = string(b)
	}
	sum := sha256.Sum256([]byte(prompt))
	return "prompt:" + in.SessionID + "\x1f" + hex.EncodeToString(sum[:16])
}

// CreateInteraction implements engram.FeedbackService. The interaction
// takes the category of its recall's top routed domain, for filtering
// exports. ENOTFOUND for a recall id outside the tenant.
func (db *DB) CreateInteraction(ctx context.Context, in *engram.Interaction) (*engram.Interaction, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	if in.UserID == "" {
		in.UserID = engram.UserFromContext(ctx)
	}
	row := interactionRow{ID: newID("int"), TenantID: tenant, UserID: in.UserID, Prompt: in.Prompt, Response: in.Response, RecallID: in.RecallID,
		SessionID: in.SessionID, TurnID: in.TurnID, Model: in.Model, GroupKey: groupKey(in), CreatedAt: db.now().UTC()}
	if len(in.Messages) > 0 {
		b, _ := json.Marshal(in.Messages)
		s := string(b)
		row.Messages = &s
	}
	g := db.w.WithContext(ctx)
	if in.RecallID != "" {
		claimed, rec, err := db.readyRecall(ctx, tenant, in.RecallID)
		if err != nil {
			return nil, err
		}
		if claimed != nil {
			if err := insertRecalls(g, []*recallRow{claimed}); err != nil {
				return nil, err
			}
		}
		if rec == nil {
			if rec, err = db.findRecall(g, tenant, in.RecallID); err != nil {
				return nil, err
			}
		}
		var route engram.Route
		if json.Unmarshal([]byte(rec.Route), &route) == nil && len(route.Domains) > 0 {
			row.Category = route.Domains[0].Name
		}
	}
	if err := db.retry(ctx, func() error { return g.Create(&row).Error }); err != nil {
		return nil, fmt.Errorf("store: create interaction: %w", err)
	}
	return row.toInteraction(), nil
}

func (db *DB) findRecall(g *gorm.DB, tenant, id string) (*recallRow, error) {
	var rows []recallRow
	if err := g.Where("tenant_id = ? AND id = ?", tenant, id).Limit(1).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: find recall: %w", err)
	}
	if len(rows) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "recall %q not found", id)
	}
	return &rows[0], nil
}

func (r *recallRow) memoryRefs() []engram.MemoryRef {
	items := r.items()
	refs := make([]engram.MemoryRef, 0, len(items))
	for _, it := range items {
		if it.shown() {
			refs = append(refs, engram.MemoryRef{ID: it.ID, Version: it.Version})
		}
	}
	return refs
}

// scores returns what feedback reads of the recall (see
// engram.RecallScores): the score it gave each memory it injected, the
// memory exploration held back, the items whose breakdown marked them
// pinned, and the memory a kind probe chose, as the recall stored them.
func (r *recallRow) scores() *engram.RecallScores {
	rs := &engram.RecallScores{UserID: r.UserID, Query: r.Query, Scores: map[string]float64{}, Injected: r.memoryRefs(), Pinned: map[string]bool{}}
	for _, it := range r.items() {
		switch {
		case it.HeldBack:
			rs.HeldBack = it.ID
			continue
		case it.Probe:
			rs.Probe = it.ID
			continue
		case it.Breakdown.Explored:
			rs.Probe, rs.ProbeIn = it.ID, true
		}
		rs.Scores[it.ID] = it.Score
		if it.Breakdown.Pinned {
			rs.Pinned[it.ID] = true
		}
	}
	return rs
}

// items returns the recall's stored items, decoded from Items on the
// first call: a feedback decodes its recall before it waits for its
// group (see RunFeedback), not in the group's one writer.
func (r *recallRow) items() []recallItemRef {
	if r.parsed == nil {
		_ = json.Unmarshal([]byte(r.Items), &r.parsed)
		if r.parsed == nil {
			r.parsed = []recallItemRef{}
		}
	}
	return r.parsed
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (r *pairRow) toPair() *engram.Pair {
	p := &engram.Pair{ID: r.ID, UserID: r.UserID, Kind: r.Kind, Prompt: r.Prompt, Chosen: r.Chosen, Rejected: r.Rejected, Margin: r.Margin,
		Category: r.Category, ChosenInteractionID: r.ChosenInteractionID, RejectedInteractionID: r.RejectedInteractionID,
		CreatedAt: r.CreatedAt.UTC()}
	if r.Messages != nil {
		_ = json.Unmarshal([]byte(*r.Messages), &p.Messages)
	}
	_ = json.Unmarshal([]byte(r.FeedbackIDs), &p.FeedbackIDs)
	_ = json.Unmarshal([]byte(r.ChosenMemories), &p.ChosenMemories)
	_ = json.Unmarshal([]byte(r.RejectedMemories), &p.RejectedMemories)
	return p
}

// exportPage is how many rows an export reads at a time: memory stays
// constant however many pairs are exported.
const exportPage = 500

// exportFilter applies a PairFilter's time range, category and user to q,
// whose rows have created_at, category and user_id columns.
func exportFilter(q *gorm.DB, f engram.PairFilter) *gorm.DB {
	if f.UserID != nil {
		q = q.Where("user_id = ?", *f.UserID)
	}
	if f.Since != nil {
		q = q.Where("created_at >= ?", f.Since.UTC())
	}
	if f.Until != nil {
		q = q.Where("created_at < ?", f.Until.UTC())
	}
	if f.Category != nil {
		q = q.Where("category = ?", *f.Category)
	}
	return q
}

func exportFingerprint(kind, tenant string, f engram.PairFilter) string {
	t := func(p *time.Time) string {
		if p == nil {
			return "-"
		}
		return p.UTC().Format(time.RFC3339Nano)
	}
	s := func(p *string) string {
		if p == nil {
			return "\x00"
		}
		return *p
	}
	return strings.Join([]string{kind, tenant, t(f.Since), t(f.Until), s(f.Category), s(f.UserID), fmt.Sprint(f.MinMargin)}, "\x1f")
}

// EachPair implements engram.FeedbackService: pairs oldest first, at most
// f.Limit of them (0: all), read a page at a time. The cursor it returns
// resumes after the last pair given to fn, for the same filter.
func (db *DB) EachPair(ctx context.Context, f engram.PairFilter, fn func(*engram.Pair) error) (string, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return "", err
	}
	fp := exportFingerprint("pairs", tenant, f)
	after, err := db.decodeCursor(f.Cursor, fp)
	if err != nil {
		return "", err
	}
	sent := 0
	for {
		q := exportFilter(db.r.WithContext(ctx).Where("tenant_id = ? AND seq > ?", tenant, after), f)
		if f.MinMargin > 0 {
			q = q.Where("margin >= ?", f.MinMargin)
		}
		var rows []pairRow
		if err := q.Order("seq").Limit(exportPage).Find(&rows).Error; err != nil {
			return "", fmt.Errorf("store: export pairs: %w", err)
		}
		for i := range rows {
			if f.Limit > 0 && sent == f.Limit {
				return db.encodeCursor(after, fp), nil
			}
			if err := fn(rows[i].toPair()); err != nil {
				return "", err
			}
			after = rows[i].Seq
			sent++
		}
		if len(rows) < exportPage {
			return "", nil
		}
	}
}

// EachUnpaired implements engram.FeedbackService: every interaction whose
// latest feedback is not neutral, labelled by its sign (KTO-style data),
// oldest first; paging and cursor as EachPair. MinMargin applies to the
// signal's magnitude.
func (db *DB) EachUnpaired(ctx context.Context, f engram.PairFilter, fn func(*engram.Unpaired) error) (string, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return "", err
	}
	fp := exportFingerprint("unpaired", tenant, f)
	after, err := db.decodeCursor(f.Cursor, fp)
	if err != nil {
		return "", err
	}
	sent := 0
	for {
		q := exportFilter(db.r.WithContext(ctx).Where("tenant_id = ? AND seq > ? AND last_signal IS NOT NULL AND last_signal <> 0", tenant, after), f)
		if f.MinMargin > 0 {
			q = q.Where("(last_signal >= ? OR last_signal <= ?)", f.MinMargin, -f.MinMargin)
		}
		var rows []interactionRow
		if err := q.Order("seq").Limit(exportPage).Find(&rows).Error; err != nil {
			return "", fmt.Errorf("store: export unpaired: %w", err)
		}
		injected, err := db.injected(ctx, tenant, rows)
		if err != nil {
			return "", err
		}
		for i := range rows {
			if f.Limit > 0 && sent == f.Limit {
				return db.encodeCursor(after, fp), nil
			}
			in := rows[i].toInteraction()
			if err := fn(&engram.Unpaired{Prompt: in.Prompt, Messages: in.Messages, Completion: in.Response,
				Label: *rows[i].LastSignal > 0, CreatedAt: in.CreatedAt, Memories: injected[in.RecallID]}); err != nil {
				return "", err
			}
			after = rows[i].Seq
			sent++
		}
		if len(rows) < exportPage {
			return "", nil
		}
	}
}

// injected returns the memories each of the interactions' recalls
// injected, by recall id, in one read.
func (db *DB) injected(ctx context.Context, tenant string, rows []interactionRow) (map[string][]engram.MemoryRef, error) {
	var ids []string
	for _, r := range rows {
		if r.RecallID != "" {
			ids = append(ids, r.RecallID)
		}
	}
	out := map[string][]engram.MemoryRef{}
	if len(ids) == 0 {
		return out, nil
	}
	var recs []recallRow
	in, list := inList(db.r, "id", ids)
	if err := db.r.WithContext(ctx).Where("tenant_id = ? AND "+in, tenant, list).Find(&recs).Error; err != nil {
		return nil, fmt.Errorf("store: export unpaired: recalls: %w", err)
	}
	for i := range recs {
		out[recs[i].ID] = recs[i].memoryRefs()
	}
	return out, nil
}
