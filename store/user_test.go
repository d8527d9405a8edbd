package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestUserScope: keys and the duplicate guard are per user, reads with a
// user see the shared rows and the user's, lists filter exactly, and
// ForgetUser removes one user's rows only; bad user ids change nothing.
func TestUserScope(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		as := func(u string) context.Context { return engram.NewContextWithUser(ctx, u) }
		create := func(c context.Context, m *engram.Memory) *engram.CreateResult {
			t.Helper()
			res, err := db.CreateMemory(c, m)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		shared := create(ctx, &engram.Memory{Content: "Same words", Category: "work", Priority: engram.P0})
		ann := create(as("ann"), &engram.Memory{Content: "Same words", Category: "work", Priority: engram.P0})
		bob := create(ctx, &engram.Memory{Content: "Same words", Category: "work", UserID: "bob", Priority: engram.P0})
		if ann.Deduplicated || bob.Deduplicated || ann.Memory.UserID != "ann" || bob.Memory.UserID != "bob" || shared.Memory.UserID != "" {
			t.Fatalf("the duplicate guard must be per user: %+v %+v %+v", shared, ann, bob)
		}
		if again := create(as("ann"), &engram.Memory{Content: "Same words", Category: "work"}); !again.Deduplicated || again.Memory.ID != ann.Memory.ID {
			t.Fatalf("ann's own duplicate: %+v", again)
		}
		for _, u := range []string{"", "ann", "bob"} {
			if _, err := db.SetKey(as(u), engram.KeyWrite{Key: "/prefs/lang", Content: json.RawMessage(`"` + u + `-lang"`), Source: json.RawMessage(`"t"`)}); err != nil {
				t.Fatal(err)
			}
		}
		for u, want := range map[string]string{"": "-lang", "ann": "ann-lang", "bob": "bob-lang", "cid": "-lang"} {
			m, err := db.FindMemoryByKey(as(u), "/prefs/lang")
			if err != nil || m.Content != want {
				t.Errorf("key for %q: %+v %v, want %q", u, m, err, want)
			}
		}
		for u, want := range map[string]int{"": 1, "ann": 2, "bob": 2} {
			pinned, err := db.PinnedMemories(as(u), "", 10)
			if err != nil || len(pinned) != want {
				t.Errorf("pinned for %q: %d %v, want %d", u, len(pinned), err, want)
			}
			for _, m := range pinned {
				if !engram.VisibleTo(m.UserID, u) {
					t.Errorf("pinned for %q holds %s's memory", u, m.UserID)
				}
			}
		}
		annID := "ann"
		page, err := db.FindMemories(ctx, engram.MemoryFilter{UserID: &annID, Limit: 50})
		if err != nil || len(page.Items) != 2 {
			t.Fatalf("list ann: %+v %v", page, err)
		}
		if _, err := db.CreateMemory(ctx, &engram.Memory{Content: "x", Category: "work", UserID: "a b"}); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("bad user id: %v", err)
		}
		if _, _, err := db.ForgetUser(ctx, ""); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("forget without id: %v", err)
		}
		res, ids, err := db.ForgetUser(ctx, "ann")
		if err != nil || res.Memories != 2 || len(ids) != 2 || res.Events < 2 {
			t.Fatalf("forget ann: %+v %v %v", res, ids, err)
		}
		if _, err := db.FindMemoryByID(ctx, ann.Memory.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("ann's memory after forget: %v", err)
		}
		if m, err := db.FindMemoryByKey(as("ann"), "/prefs/lang"); err != nil || m.Content != "-lang" {
			t.Errorf("ann after forget sees the shared key: %+v %v", m, err)
		}
		for _, id := range []string{shared.Memory.ID, bob.Memory.ID} {
			if _, err := db.FindMemoryByID(ctx, id); err != nil {
				t.Errorf("%s after ann's forget: %v", id, err)
			}
		}
	})
}
