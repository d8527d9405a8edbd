package store

import (
	"context"
	"encoding/json"
	"fmt"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// ForgetUser deletes every row of the tenant's end user userID in one
// transaction (docs/users.md): the user's memories with their history
// (memory_events, which is also the change feed), embeddings,
// helpfulness and feedback credits; the user's sessions with their events
// and working states; the user's recalls, interactions, feedback and
// pairs, and those that hang on them; and every reflection that cites or
// groups one of the user's memories, with its versions (the caller writes
// the groups again without them). It returns the counts and the ids of
// the memories deleted, for the files outside the database.
//
// The tenant's feed sequence is advanced past a number no event takes, so
// that every follower of the feed in any process meets a gap on its next
// read and reloads from the store (index.sync) instead of keeping what it
// had learned of the deleted events. On SQLite, whose connections run
// with secure_delete on (Open), the deleted bytes are overwritten with
// zeros; the full-text index is merged afterwards (FTS5 'optimize'), which
// rewrites its segments without the deleted rows' terms, and the
// write-ahead log checkpointed and truncated.
func (db *DB) ForgetUser(ctx context.Context, userID string) (*engram.ForgetResult, []string, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, nil, err
	}
	if userID == "" {
		return nil, nil, engram.Errorf(engram.EINVALID, "user id is required")
	}
	if err := engram.CheckUserID(userID); err != nil {
		return nil, nil, err
	}
	// Recall records still in the writer's buffer go in first, so that
	// the user's are among the rows deleted.
	if err := db.FlushRecalls(ctx); err != nil {
		return nil, nil, err
	}
	res := &engram.ForgetResult{UserID: userID}
	var ids []string
	sqlite := db.dialect.name() == "sqlite"
	err = db.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Raw(userIDs, tenant, userID).Scan(&ids).Error; err != nil {
			return err
		}
		var sessions, recalls, interactions, feedback []string
		for _, q := range []struct {
			dst *[]string
			sql string
		}{
			{&sessions, `SELECT id FROM sessions WHERE tenant_id = ? AND user_id = ?`},
			{&recalls, `SELECT id FROM recalls WHERE tenant_id = ? AND user_id = ?`},
		} {
			if err := tx.Raw(q.sql, tenant, userID).Scan(q.dst).Error; err != nil {
				return err
			}
		}
		if err := tx.Raw(`SELECT id FROM interactions WHERE tenant_id = ? AND (user_id = ? OR recall_id IN ?)`,
			tenant, userID, orNone(recalls)).Scan(&interactions).Error; err != nil {
			return err
		}
		if err := tx.Raw(`SELECT id FROM feedback WHERE tenant_id = ? AND (user_id = ? OR recall_id IN ? OR interaction_id IN ? OR memory_id IN (`+userIDs+`))`,
			tenant, userID, orNone(recalls), orNone(interactions), tenant, userID).Scan(&feedback).Error; err != nil {
			return err
		}
		pending, err := pendingOfUser(tx, tenant, userID, ids, recalls, interactions)
		if err != nil {
			return err
		}
		var reflections []string
		if err := tx.Raw(`SELECT id FROM reflections WHERE tenant_id = ? AND user_id = ?`, tenant, userID).Scan(&reflections).Error; err != nil {
			return err
		}
		for i := 0; i < len(ids); i += 200 {
			var more []string
			q := tx.Table("reflections").Select("id").Where("tenant_id = ?", tenant)
			cond := tx.Where("1 = 0")
			for _, id := range ids[i:min(i+200, len(ids))] {
				cond = cond.Or("members LIKE ?", "%\""+id+"\"%").Or("cited LIKE ?", "%\""+id+"\"%")
			}
			if err := q.Where(cond).Scan(&more).Error; err != nil {
				return err
			}
			reflections = append(reflections, more...)
		}
		words, err := wordFeatures(tx, tenant, userID)
		if err != nil {
			return err
		}
		var pendingN int64
		steps := []struct {
			n    *int64
			sql  string
			args []any
		}{
			{nil, `DELETE FROM memory_help WHERE tenant_id = ? AND memory_id IN ?`, []any{tenant, orNone(words)}},
			{&res.Vectors, `DELETE FROM memory_vectors WHERE memory_seq IN (` + userSeqs + `)`, []any{tenant, userID}},
			{&res.Help, `DELETE FROM memory_help WHERE tenant_id = ? AND memory_id IN (` + userIDs + `)`, []any{tenant, tenant, userID}},
			{&res.Credits, `DELETE FROM feedback_credits WHERE tenant_id = ? AND (memory_id IN (` + userIDs + `) OR feedback_id IN ?)`,
				[]any{tenant, tenant, userID, orNone(feedback)}},
			{&res.Events, `DELETE FROM memory_events WHERE tenant_id = ? AND memory_id IN (` + userIDs + `)`, []any{tenant, tenant, userID}},
			{nil, `DELETE FROM memory_aliases WHERE tenant_id = ? AND user_id = ?`, []any{tenant, userID}},
			{nil, `DELETE FROM memory_links WHERE tenant_id = ? AND (from_id IN (` + userIDs + `) OR to_id IN (` + userIDs + `))`,
				[]any{tenant, tenant, userID, tenant, userID}},
			{&res.Memories, `DELETE FROM memories WHERE tenant_id = ? AND user_id = ?`, []any{tenant, userID}},
			{&res.SessionItems, `DELETE FROM session_events WHERE tenant_id = ? AND session_id IN ?`, []any{tenant, orNone(sessions)}},
			{nil, `DELETE FROM working_states WHERE tenant_id = ? AND scope = ? AND scope_id IN ?`, []any{tenant, engram.ScopeSession, orNone(sessions)}},
			{&res.Sessions, `DELETE FROM sessions WHERE tenant_id = ? AND id IN ?`, []any{tenant, orNone(sessions)}},
			{&res.Pairs, `DELETE FROM pairs WHERE tenant_id = ? AND (user_id = ? OR chosen_interaction_id IN ? OR rejected_interaction_id IN ?)`,
				[]any{tenant, userID, orNone(interactions), orNone(interactions)}},
			{&res.Feedback, `DELETE FROM feedback WHERE tenant_id = ? AND id IN ?`, []any{tenant, orNone(feedback)}},
			{&pendingN, `DELETE FROM feedback_pending WHERE tenant_id = ? AND id IN ?`, []any{tenant, orNone(pending)}},
			{&res.Interactions, `DELETE FROM interactions WHERE tenant_id = ? AND id IN ?`, []any{tenant, orNone(interactions)}},
			{&res.Recalls, `DELETE FROM recalls WHERE tenant_id = ? AND id IN ?`, []any{tenant, orNone(recalls)}},
			{nil, `DELETE FROM reflection_versions WHERE tenant_id = ? AND reflection_id IN ?`, []any{tenant, orNone(reflections)}},
			{&res.Reflections, `DELETE FROM reflections WHERE tenant_id = ? AND id IN ?`, []any{tenant, orNone(reflections)}},
			{nil, `UPDATE tenants SET feed_seq = feed_seq + 1 WHERE id = ?`, []any{tenant}},
		}
		for _, st := range steps {
			r := tx.Exec(st.sql, st.args...)
			if r.Error != nil {
				return r.Error
			}
			if st.n != nil {
				*st.n = r.RowsAffected
			}
		}
		res.Feedback += pendingN
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: forget user: %w", err)
	}
	db.vectors.drop(tenant)
	if sqlite {
		// Merge the full-text index's segments, which drops the deleted
		// rows' terms, then copy the write-ahead log into the database and
		// truncate it, so that the old page images leave the WAL file.
		if err := db.w.WithContext(ctx).Exec(`INSERT INTO memories_fts (memories_fts) VALUES ('optimize')`).Error; err != nil {
			return nil, nil, fmt.Errorf("store: forget user: merge full-text index: %w", err)
		}
		if err := db.checkpointTruncate(ctx); err != nil {
			return nil, nil, fmt.Errorf("store: forget user: %w", err)
		}
	}
	return res, ids, nil
}

// orNone stands for an empty IN list, which SQL does not allow: no row
// has the empty id.
func orNone(ids []string) []string {
	if len(ids) == 0 {
		return []string{""}
	}
	return ids
}

// userIDs and userSeqs select the ids and seqs of a user's memories
// (arguments: tenant, user), on memories_tenant_user.
const (
	userIDs  = `SELECT id FROM memories WHERE tenant_id = ? AND user_id = ?`
	userSeqs = `SELECT seq FROM memories WHERE tenant_id = ? AND user_id = ?`
)

// wordFeatures returns the learned-model feature keys that carry words
// of the user's memories (their leading words, tags and key prefix, as
// read now and before: engram.Memory.WordFeatures), so that forgetting the user erases them with
// the memories. Evidence other memories added to such a feature goes with
// it; the features that name no words (type, category, length, shape,
// write path) stay, as origin evidence does (docs/users.md).
func wordFeatures(tx *gorm.DB, tenant, userID string) ([]string, error) {
	var rows []struct {
		Key     string
		Tags    string
		Content string
	}
	if err := tx.Raw(`SELECT key, tags, content FROM memories WHERE tenant_id = ? AND user_id = ?`, tenant, userID).Scan(&rows).Error; err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, r := range rows {
		m := &engram.Memory{Key: r.Key, Content: r.Content}
		_ = json.Unmarshal([]byte(r.Tags), &m.Tags)
		for _, f := range m.WordFeatures() {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// pendingOfUser lists the tenant's feedback acknowledged and not yet
// applied that the user posted or that targets the user's memories,
// recalls or interactions: forgetting the user erases it with the rest.
// The queue holds seconds of posts, so it is read whole.
func pendingOfUser(tx *gorm.DB, tenant, userID string, memories, recalls, interactions []string) ([]string, error) {
	var rows []struct{ ID, Input string }
	if err := tx.Raw(`SELECT id, input FROM feedback_pending WHERE tenant_id = ?`, tenant).Scan(&rows).Error; err != nil {
		return nil, err
	}
	owned := map[string]bool{}
	for _, list := range [][]string{memories, recalls, interactions} {
		for _, id := range list {
			owned[id] = true
		}
	}
	var out []string
	for _, r := range rows {
		var in engram.FeedbackInput
		if err := json.Unmarshal([]byte(r.Input), &in); err != nil {
			return nil, fmt.Errorf("store: pending feedback %s: %w", r.ID, err)
		}
		if in.UserID == userID || owned[in.MemoryID] || owned[in.RecallID] || owned[in.InteractionID] {
			out = append(out, r.ID)
		}
	}
	return out, nil
}
