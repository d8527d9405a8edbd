package store_test

import (
	"context"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestSeedMemories: seeded memories are live and searchable with their
// users, and a batch with an invalid memory, a bad user id or no tenant
// stores nothing.
func TestSeedMemories(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		count := func() map[string]string {
			t.Helper()
			users := map[string]string{}
			if _, err := db.EachLive(ctx, func(m *engram.Memory) error {
				users[m.Content] = m.UserID
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return users
		}
		for name, ms := range map[string][]*engram.Memory{
			"invalid":  {{Content: "kept out", Category: "work"}, {Content: "", Category: "work"}},
			"bad user": {{Content: "kept out", Category: "work", UserID: "a/b"}},
		} {
			if err := db.SeedMemories(ctx, ms); err == nil {
				t.Fatalf("%s: seeded", name)
			}
		}
		if err := db.SeedMemories(context.Background(), []*engram.Memory{{Content: "no tenant", Category: "work"}}); err == nil {
			t.Fatal("seeded without a tenant")
		}
		if got := count(); len(got) != 0 {
			t.Fatalf("a failed seed stored %v", got)
		}
		ms := []*engram.Memory{{Content: "ann likes green tea", Category: "life", UserID: "ann"},
			{Content: "bob likes black coffee", Category: "life", UserID: "bob"}, {Content: "the office opens at nine", Category: "work"}}
		if err := db.SeedMemories(ctx, ms); err != nil {
			t.Fatal(err)
		}
		got := count()
		if len(got) != 3 || got["ann likes green tea"] != "ann" || got["bob likes black coffee"] != "bob" || got["the office opens at nine"] != "" {
			t.Fatalf("seeded: %v", got)
		}
		if ms[0].ID == "" || ms[0].Version != 1 {
			t.Fatalf("seeded memory not filled in: %+v", ms[0])
		}
		n, err := db.BareFTS(engram.NewContextWithUser(ctx, "ann"), "green tea", 10)
		if err != nil || n != 1 {
			t.Fatalf("full-text search of a seeded memory: %d %v", n, err)
		}
	})
}
