package store_test

import (
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestWriteGuardLevels: each security level holds its own copy of a
// text; a write meets only the copy at its level, and lowering a copy
// onto its twin's level is a conflict.
func TestWriteGuardLevels(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		first := mustCreate(t, db, ctx, &engram.Memory{Content: "Standup is at 9:30", Category: "work"})
		// Each security level holds its own copy: a write never meets a
		// memory at another level (one above the writer's clearance would
		// tell it that its text is stored there).
		secret := mustCreate(t, db, ctx, &engram.Memory{Content: "Standup is at 9:30", Category: "work", SecurityLevel: engram.SecuritySecret})
		if secret.ID == first.ID || secret.SecurityLevel != engram.SecuritySecret {
			t.Fatalf("a write at another level met the memory at the default level: %+v", secret)
		}
		if res, err := db.CreateMemory(ctx, &engram.Memory{Content: "Standup is at 9:30", Category: "work", SecurityLevel: engram.SecuritySecret}); err != nil ||
			!res.Deduplicated || res.Memory.ID != secret.ID {
			t.Fatalf("a write at the secret level must meet the secret copy: %+v %v", res, err)
		}
		if _, err := db.UpdateMemory(ctx, secret.ID, engram.MemoryUpdate{SecurityLevel: ptr(engram.SecurityInternal)}); engram.ErrorCode(err) != engram.ECONFLICT {
			t.Fatalf("lowering a copy onto the level of its twin: %v, want a conflict", err)
		}
	})
}

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
