package store_test

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// TestUniqueRule: the store tells the unique rules it handles apart by the
// database's error, never by matching words in its text.
func TestUniqueRule(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		tenant := engram.TenantFromContext(ctx)
		a, err := db.CreateMemory(ctx, &engram.Memory{Content: "one live copy"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.SetKey(ctx, engram.KeyWrite{Key: "/user/name", Content: []byte(`"Ada"`), Source: []byte(`"test"`)}); err != nil {
			t.Fatal(err)
		}
		row := func(key any, hash string) error {
			return db.Exec(`INSERT INTO memories (id, tenant_id, agent_id, key, category, content, importance, priority, confidence,
				security_level, stability, token_count, summary_token_count, content_hash, valid, created_at, updated_at, version)
				VALUES (?, ?, '', ?, 'life', 'x', 0.5, 'P2', 0.5, 'internal', 90, 1, 0, ?, TRUE, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 1)`,
				"mem_"+hash[:8], tenant, key, hash)
		}
		for _, tt := range []struct {
			name string
			err  error
			want string
		}{
			{"dedupe", row(nil, a.Memory.ContentHash), "dedupe"},
			{"key", row("/user/name", "0123456789abcdef"), "key"},
			{"event version", db.Exec(`INSERT INTO memory_events (tenant_id, memory_id, version, action, actor, created_at)
				VALUES (?, ?, 1, 'create', '{}', CURRENT_TIMESTAMP)`, tenant, a.Memory.ID), "event_version"},
			{"other unique", db.Exec(`INSERT INTO tenants (id, name, created_at) VALUES ('t_dup', 'acme', CURRENT_TIMESTAMP)`), "other"},
			{"not a violation", errors.New("memories_dedupe memory_events"), "other"},
		} {
			if tt.err == nil && tt.want != "other" {
				t.Errorf("%s: the statement did not fail", tt.name)
				continue
			}
			if got := db.UniqueRule(tt.err); got != tt.want {
				t.Errorf("%s: rule %q, want %q (%v)", tt.name, got, tt.want, tt.err)
			}
		}
	})
}

// TestRedactErrKeepsChain: the DSN leaves the message, the cause stays.
func TestRedactErrKeepsChain(t *testing.T) {
	dsn := "host=db user=engram password=hunter2"
	cause := &fs.PathError{Op: "dial", Path: dsn, Err: context.DeadlineExceeded}
	err := store.RedactErr(cause, dsn)
	if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "<dsn>") {
		t.Errorf("message %q", err)
	}
	var pe *fs.PathError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &pe) {
		t.Errorf("chain lost: %v", err)
	}
}
