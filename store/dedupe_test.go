package store_test

import (
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestWriteGuardServers: two servers on one database share the duplicate
// guard per level: what one stored, the other meets at that level and
// stores anew at another.
func TestWriteGuardServers(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		a, b := storetest.OpenWith(t, o), storetest.OpenWith(t, o)
		ctx := storetest.Tenant(t, a, "acme")
		first := mustCreate(t, a, ctx, &engram.Memory{Content: "Standup is at 9:30", Category: "work"})
		res, err := b.CreateMemory(ctx, &engram.Memory{Content: "Standup is at 9:30", Category: "work"})
		if err != nil || !res.Deduplicated || res.Memory.ID != first.ID {
			t.Fatalf("the second server missed the first's copy at the same level: %+v %v", res, err)
		}
		res, err = b.CreateMemory(ctx, &engram.Memory{Content: "Standup is at 9:30", Category: "work", SecurityLevel: engram.SecurityConfidential})
		if err != nil || res.Deduplicated || res.Memory.ID == first.ID {
			t.Fatalf("the second server met the first's copy at another level: %+v %v", res, err)
		}
	})
}
