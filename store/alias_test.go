package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

func mustSetKey(t *testing.T, db *store.DB, ctx context.Context, key, content string) *engram.Memory {
	t.Helper()
	m, err := setKey(db, ctx, key, content, `"test"`)
	if err != nil {
		t.Fatalf("set %s: %v", key, err)
	}
	return m
}

func wantAliasCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if engram.ErrorCode(err) != code {
		t.Fatalf("%s: got %v, want %s", what, err, code)
	}
}

// TestAliases: an alias reads, writes and tombstones its target; it is a
// version of the target; a tombstoned target makes it answer 404 until
// the key is written again; chains, shadowing, self-aliases and bad paths
// are refused and change nothing; aliases are per user and per tenant.
func TestAliases(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		pet := mustSetKey(t, db, ctx, "/user/pet", `"a grey cat called Dumpling"`)
		mustSetKey(t, db, ctx, "/user/home", `"Lisbon"`)

		a, err := db.SetAlias(ctx, "/user/猫", "/user/pet")
		if err != nil || a.Alias != "/user/猫" || a.Key != "/user/pet" || a.MemoryID != pet.ID || a.Version != 2 || !a.Valid {
			t.Fatalf("set: %+v %v", a, err)
		}
		again, err := db.SetAlias(ctx, "/user/猫", "/user/pet")
		if err != nil || again.Version != 2 {
			t.Fatalf("setting again must change nothing: %+v %v", again, err)
		}
		m, err := db.FindMemoryByKey(ctx, "/user/猫")
		if err != nil || m.ID != pet.ID || m.Version != 2 || m.Key != "/user/pet" {
			t.Fatalf("read through the alias: %+v %v", m, err)
		}
		events, _ := db.FindMemoryEvents(ctx, pet.ID)
		if len(events) != 2 || events[1].Action != engram.ActionAlias || len(events[1].Aliases) != 1 || events[1].Aliases[0].Alias != "/user/猫" {
			t.Fatalf("history: %+v", events)
		}

		// Bad input: nothing changes.
		for _, c := range []struct{ alias, key, code string }{
			{"user/x", "/user/pet", engram.EINVALID},
			{"/user/x", "/user//pet", engram.EINVALID},
			{"/user/../x", "/user/pet", engram.EINVALID},
			{"/user/pet", "/user/pet", engram.EINVALID},
			{"/user/x", "/user/none", engram.ENOTFOUND},
			{"/user/x", "/user/猫", engram.ECONFLICT},      // a chain
			{"/user/home", "/user/pet", engram.ECONFLICT}, // a live key of its own
			{"/user/猫", "/user/home", engram.ECONFLICT},   // already an alias of another memory
		} {
			_, err := db.SetAlias(ctx, c.alias, c.key)
			wantAliasCode(t, c.alias+" → "+c.key, err, c.code)
		}
		if _, err := db.SetAlias(engram.NewContextWithUser(ctx, "bad user"), "/user/x", "/user/pet"); engram.ErrorCode(err) != engram.EINVALID {
			t.Fatalf("a bad user id: %v", err)
		}
		if m, _ := db.FindMemoryByID(ctx, pet.ID); m.Version != 2 {
			t.Fatalf("refused aliases must change nothing: version %d", m.Version)
		}
		if _, err := db.FindAlias(ctx, "/user/x"); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Fatalf("a refused alias must not exist: %v", err)
		}

		// A write through the alias replaces the target.
		w := mustSetKey(t, db, ctx, "/user/猫", `"a grey cat called Dumpling; she only eats salmon kibble"`)
		if w.ID != pet.ID || w.Key != "/user/pet" || w.Version != 3 {
			t.Fatalf("write through the alias: %+v", w)
		}
		list, err := db.FindAliases(ctx, pet.ID)
		if err != nil || len(list) != 1 || list[0].Alias != "/user/猫" {
			t.Fatalf("list: %+v %v", list, err)
		}
		if _, err := db.FindAliases(ctx, "mem_unknown"); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Fatalf("aliases of an unknown memory: %v", err)
		}

		// Tombstoning through the alias: the alias answers 404, stays listed.
		if _, err := db.SetKey(ctx, engram.KeyWrite{Key: "/user/猫", Content: json.RawMessage("null"), Source: json.RawMessage(`"test"`)}); err != nil {
			t.Fatal(err)
		}
		_, err = db.FindMemoryByKey(ctx, "/user/pet")
		wantAliasCode(t, "tombstoned target", err, engram.ENOTFOUND)
		_, err = db.FindMemoryByKey(ctx, "/user/猫")
		wantAliasCode(t, "alias of a tombstoned target", err, engram.ENOTFOUND)
		if a, err := db.FindAlias(ctx, "/user/猫"); err != nil || a.Valid {
			t.Fatalf("the alias stays, not valid: %+v %v", a, err)
		}
		_, err = db.SetAlias(ctx, "/user/kitty", "/user/pet")
		wantAliasCode(t, "alias of a tombstoned key", err, engram.ENOTFOUND)
		mustSetKey(t, db, ctx, "/user/pet", `"Dumpling"`)
		if m, err := db.FindMemoryByKey(ctx, "/user/猫"); err != nil || m.ID != pet.ID {
			t.Fatalf("a target written again answers through the alias: %+v %v", m, err)
		}

		// Per user: ann's alias is not the shared one; ann reads the
		// shared alias when she has none.
		ann := engram.NewContextWithUser(ctx, "ann")
		if m, err := db.FindMemoryByKey(ann, "/user/猫"); err != nil || m.ID != pet.ID {
			t.Fatalf("ann reads the shared alias: %+v %v", m, err)
		}
		_, err = db.FindAlias(ann, "/user/猫")
		wantAliasCode(t, "ann has no alias of her own", err, engram.ENOTFOUND)
		_, err = db.SetAlias(ann, "/user/cat", "/user/pet")
		wantAliasCode(t, "ann's alias of the shared key", err, engram.ENOTFOUND)
		annPet := mustSetKey(t, db, ann, "/user/pet", `"a dog called Rex"`)
		if a, err := db.SetAlias(ann, "/user/猫", "/user/pet"); err != nil || a.MemoryID != annPet.ID || a.UserID != "ann" {
			t.Fatalf("ann's alias: %+v %v", a, err)
		}
		if m, err := db.FindMemoryByKey(ann, "/user/猫"); err != nil || m.ID != annPet.ID {
			t.Fatalf("ann reads her alias: %+v %v", m, err)
		}
		if m, err := db.FindMemoryByKey(ctx, "/user/猫"); err != nil || m.ID != pet.ID {
			t.Fatalf("the shared alias is untouched: %+v %v", m, err)
		}

		// Another tenant sees nothing.
		other := storetest.Tenant(t, db, "globex")
		_, err = db.FindMemoryByKey(other, "/user/猫")
		wantAliasCode(t, "another tenant's read", err, engram.ENOTFOUND)
		_, err = db.FindAlias(other, "/user/猫")
		wantAliasCode(t, "another tenant's alias", err, engram.ENOTFOUND)
		_, err = db.DeleteAlias(other, "/user/猫")
		wantAliasCode(t, "another tenant's delete", err, engram.ENOTFOUND)
		_, err = db.FindAliases(other, pet.ID)
		wantAliasCode(t, "another tenant's list", err, engram.ENOTFOUND)
		if _, err := db.SetKey(other, engram.KeyWrite{Key: "/user/猫", Content: json.RawMessage(`"x"`), Source: json.RawMessage(`"t"`)}); err != nil {
			t.Fatal(err)
		}
		if m, _ := db.FindMemoryByKey(ctx, "/user/猫"); m.ID != pet.ID {
			t.Fatalf("another tenant's key must not reach the alias: %+v", m)
		}

		// Delete: a version of the target; then the path is free.
		before, _ := db.FindMemoryByID(ctx, pet.ID)
		d, err := db.DeleteAlias(ctx, "/user/猫")
		if err != nil || d.Alias != "/user/猫" {
			t.Fatalf("delete: %+v %v", d, err)
		}
		after, _ := db.FindMemoryByID(ctx, pet.ID)
		if after.Version != before.Version+1 || after.Content != before.Content {
			t.Fatalf("delete is a version of the target: %d → %d", before.Version, after.Version)
		}
		_, err = db.DeleteAlias(ctx, "/user/猫")
		wantAliasCode(t, "delete again", err, engram.ENOTFOUND)
		_, err = db.FindMemoryByKey(ctx, "/user/猫")
		wantAliasCode(t, "read a deleted alias", err, engram.ENOTFOUND)
		if m, err := db.FindMemoryByKey(ann, "/user/猫"); err != nil || m.ID != annPet.ID {
			t.Fatalf("ann's alias stays: %+v %v", m, err)
		}
	})
}

// TestAliasesExportImportReset: aliases travel in an export (with the
// target's new id on a remapped import) and a reset removes them.
func TestAliasesExportImportReset(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		src := storetest.Tenant(t, db, "src")
		mustSetKey(t, db, engram.NewContextWithUser(src, "ann"), "/user/pet", `"a grey cat called Dumpling"`)
		if _, err := db.SetAlias(engram.NewContextWithUser(src, "ann"), "/user/cat", "/user/pet"); err != nil {
			t.Fatal(err)
		}
		// A link rides along too: the food memory points at the pet.
		pet, err := db.FindMemoryByKey(engram.NewContextWithUser(src, "ann"), "/user/pet")
		if err != nil {
			t.Fatal(err)
		}
		food := mustSetKey(t, db, engram.NewContextWithUser(src, "ann"), "/user/pet-food", `"salmon kibble"`)
		if _, err := db.CreateLink(src, engram.Link{From: food.ID, To: pet.ID, Relation: "mentions"}); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := db.ExportTenant(src, &out); err != nil {
			t.Fatal(err)
		}
		dst := storetest.Tenant(t, db, "dst")
		res, err := db.ImportTenant(dst, bytes.NewReader(out.Bytes()), "")
		if err != nil || res.Records["memory_alias"] != 1 || res.Records["memory_link"] != 1 {
			t.Fatalf("import: %+v %v", res, err)
		}
		ann := engram.NewContextWithUser(dst, "ann")
		m, err := db.FindMemoryByKey(ann, "/user/cat")
		if err != nil || m.Key != "/user/pet" {
			t.Fatalf("read through the imported alias: %+v %v", m, err)
		}
		newFood, err := db.FindMemoryByKey(ann, "/user/pet-food")
		if err != nil {
			t.Fatal(err)
		}
		if ls, err := db.FindLinks(dst, m.ID); err != nil || len(ls) != 1 || ls[0].From != newFood.ID || ls[0].Relation != "mentions" {
			t.Fatalf("imported link: %+v %v", ls, err)
		}
		if a, err := db.FindAlias(ann, "/user/cat"); err != nil || a.MemoryID != m.ID || !a.Valid {
			t.Fatalf("imported alias: %+v %v", a, err)
		}
		reset, err := db.ResetTenant(dst)
		if err != nil || reset.Removed["memory_links"] != 1 {
			t.Fatalf("reset: %+v %v", reset, err)
		}
		_, err = db.FindAlias(ann, "/user/cat")
		wantAliasCode(t, "alias after a reset", err, engram.ENOTFOUND)

	})
}
