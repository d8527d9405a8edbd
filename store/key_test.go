package store_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gorm.io/driver/sqlite"
	"gorm.io/gorm"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

func setKey(db *store.DB, ctx context.Context, key, content, source string) (*engram.Memory, error) {
	return db.SetKey(ctx, engram.KeyWrite{Key: key, Content: json.RawMessage(content), Source: json.RawMessage(source)})
}

const chat = `{"kind":"user","name":"chat","retrieved_at":"2026-02-22T10:00:00Z","locator":{"conversation_id":"c1","message_id":"m9"}}`

func TestSetKeyLastWriteWinsAndTombstone(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		m1, err := setKey(db, ctx, "/user/preference/style", `{"text":"concise answers","tags":["style"],"importance":0.9}`, chat)
		if err != nil {
			t.Fatal(err)
		}
		if m1.Category != "preference" || m1.Content != "concise answers" || m1.Importance != 0.9 || m1.Tags[0] != "style" {
			t.Fatalf("first write %+v", m1)
		}
		m2, err := setKey(db, ctx, "/user/preference/style", `"bullet points, no emoji"`, `"chat"`)
		if err != nil {
			t.Fatal(err)
		}
		if m2.ID != m1.ID || m2.Version != 2 || m2.Content != "bullet points, no emoji" || len(m2.Tags) != 0 {
			t.Fatalf("last write must replace the memory: %+v", m2)
		}
		got, err := db.FindMemoryByKey(ctx, "/user/preference/style")
		if err != nil || got.Content != m2.Content {
			t.Fatalf("get: %+v %v", got, err)
		}
		empty, err := setKey(db, ctx, "/user/empty", `{}`, `"chat"`)
		if err != nil || !empty.Valid || string(empty.Data) != "{}" {
			t.Fatalf("{} is valid content: %+v %v", empty, err)
		}
		ts, err := setKey(db, ctx, "/user/preference/style", `null`, `"chat"`)
		if err != nil || ts.Valid || ts.Version != 3 {
			t.Fatalf("tombstone: %+v %v", ts, err)
		}
		_, err = db.FindMemoryByKey(ctx, "/user/preference/style")
		wantCode(t, err, engram.ENOTFOUND)
		again, err := setKey(db, ctx, "/user/preference/style", `null`, `"chat"`)
		if err != nil || again.Version != 3 {
			t.Fatalf("second tombstone must change nothing: %+v %v", again, err)
		}
		_, err = setKey(db, ctx, "/never/written", `null`, `"chat"`)
		wantCode(t, err, engram.ENOTFOUND)
		revived, err := setKey(db, ctx, "/user/preference/style", `"long answers"`, `"chat"`)
		if err != nil || !revived.Valid || revived.ID != m1.ID || revived.Version != 4 {
			t.Fatalf("revive: %+v %v", revived, err)
		}
	})
}

// An agent named in the content makes the key private; replacing it
// without naming one keeps it private.
func TestSetKeyAgentOwner(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		m, err := setKey(db, ctx, "/agents/a1/notes", `{"text":"private","agent_id":"a1"}`, `"chat"`)
		if err != nil || m.AgentID != "a1" {
			t.Fatalf("owner from content: %+v %v", m, err)
		}
		m, err = setKey(db, ctx, "/agents/a1/notes", `"still private"`, `"chat"`)
		if err != nil || m.AgentID != "a1" {
			t.Fatalf("a replace without an owner must keep it: %+v %v", m, err)
		}
	})
}

func TestSetKeyExpiry(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		now := time.Date(2026, 2, 22, 10, 0, 0, 0, time.UTC)
		o := storetest.Options(t, engine)
		o.Now = func() time.Time { return now }
		db := storetest.OpenWith(t, o)
		ctx := storetest.Tenant(t, db, "acme")
		if _, err := setKey(db, ctx, "/user/calendar/dentist", `{"text":"牙科复诊","expired_at":"2026-02-23T10:00:00Z"}`, chat); err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindMemoryByKey(ctx, "/user/calendar/dentist"); err != nil {
			t.Fatal(err)
		}
		now = now.Add(48 * time.Hour)
		_, err := db.FindMemoryByKey(ctx, "/user/calendar/dentist")
		wantCode(t, err, engram.ENOTFOUND)
	})
}

func TestSetKeyRefusals(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		web := `{"kind":"web","name":"apple.com","retrieved_at":"2026-02-22T10:05:00Z","locator":{"url":"https://example.org"}}`
		for _, tc := range []struct{ key, content, source, want string }{
			{"user/x", `"v"`, `"chat"`, "start with"},
			{"/a//b", `"v"`, `"chat"`, "empty segment"},
			{"/a/b/", `"v"`, `"chat"`, "empty segment"},
			{"/a/../b", `"v"`, `"chat"`, `".."`},
			{"/a/\x00b", `"v"`, `"chat"`, "control"},
			{"/a/\nb", `"v"`, `"chat"`, "control"},
			{"/" + strings.Repeat("s", 300), `"v"`, `"chat"`, "segment is longer"},
			{"/a", `"v"`, ``, "source is required"},
			{"/a", `"v"`, `""`, "must not be empty"},
			{"/a", `"v"`, `42`, "string or an object"},
			{"/kb/apple", `"v"`, `"chat"`, "must be an object"},
			{"/kb/apple", `"v"`, `{"kind":"user","name":"x"}`, "retrieved_at, locator"},
			{"/notes/a", `"v"`, `{"kind":"web","name":"x","retrieved_at":"2026-02-22T10:05:00Z"}`, "locator"},
			{"/notes/a", `"v"`, `{"kind":"tool","name":"x","retrieved_at":"yesterday","locator":"q"}`, "RFC 3339"},
			{"/notes/a", ``, `"chat"`, "content is required"},
		} {
			_, err := setKey(db, ctx, tc.key, tc.content, tc.source)
			if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(engram.ErrorMessage(err), tc.want) {
				t.Errorf("key %q source %s: err %v, want invalid mentioning %q", tc.key, tc.source, err, tc.want)
			}
		}
		if n := len(mustList(t, db, ctx, engram.MemoryFilter{IncludeInvalid: true})); n != 0 {
			t.Fatalf("refused writes stored %d memories", n)
		}
		m, err := setKey(db, ctx, "/kb/apple/iphone", `{"text":"iPhone 16 launched in September 2024"}`, web)
		if err != nil || m.Category != "kb" {
			t.Fatalf("kb write with provenance: %+v %v", m, err)
		}
	})
}

func TestSetKeyQuarantine(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		o.Rules.Memory.Untrusted = "quarantine"
		db := storetest.OpenWith(t, o)
		ctx := storetest.Tenant(t, db, "acme")
		m, err := setKey(db, ctx, "/kb/rumour", `"unsourced"`, `{"kind":"web","name":"forum"}`)
		if err != nil || m.Key != "/untrusted/kb/rumour" {
			t.Fatalf("quarantine: %+v %v", m, err)
		}
		_, err = setKey(db, ctx, "/kb/rumour", `"x"`, ``)
		wantCode(t, err, engram.EINVALID)
	})
}

func TestReopenKeepsDataAndSkipsMigrations(t *testing.T) {
	o := storetest.Options(t, "sqlite")
	db := storetest.OpenWith(t, o)
	ctx := storetest.Tenant(t, db, "acme")
	m := mustCreate(t, db, ctx, &engram.Memory{Content: "survives restart", Category: "work"})
	mustCreate(t, db, ctx, &engram.Memory{Content: "second", Category: "work"})
	page1, _ := db.FindMemories(ctx, engram.MemoryFilter{Limit: 1})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2 := storetest.OpenWith(t, o)
	got, err := db2.FindMemoryByID(ctx, m.ID)
	if err != nil || got.Content != m.Content {
		t.Fatalf("after reopen: %+v %v", got, err)
	}
	page2, err := db2.FindMemories(ctx, engram.MemoryFilter{Limit: 1, Cursor: page1.NextCursor})
	if err != nil || len(page2.Items) != 1 || page2.Items[0].ID != m.ID {
		t.Fatalf("cursor secret must survive a restart: %v", err)
	}
	if err := db2.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := gorm.Open(sqlite.Open(filepath.Join(o.DataDir, "engram.db")), &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Exec(`INSERT INTO schema_migrations (name, applied_at) VALUES ('9999_future.sql', CURRENT_TIMESTAMP)`).Error; err != nil {
		t.Fatal(err)
	}
	if s, err := raw.DB(); err == nil {
		_ = s.Close()
	}
	if _, err := store.Open(context.Background(), o); err == nil || !strings.Contains(err.Error(), "9999_future.sql") {
		t.Fatalf("a newer schema must stop start-up, got %v", err)
	}
}
