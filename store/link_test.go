package store_test

import (
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestLinks: a link is a version of the memory it starts from, listed from
// both ends; linking again changes nothing; unlinking is a version too; a
// tombstoned end hides the link until a rollback revives it; bad input
// changes nothing.
func TestLinks(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		cat := mustCreate(t, db, ctx, &engram.Memory{Content: "We adopted a grey cat called Dumpling", Category: "life"})
		food := mustCreate(t, db, ctx, &engram.Memory{Content: "She only eats salmon kibble", Category: "life"})
		other := mustCreate(t, db, ctx, &engram.Memory{Content: "Standup is at 9:30", Category: "work"})

		l, err := db.CreateLink(ctx, engram.Link{From: food.ID, To: cat.ID, Relation: " Mentions "})
		if err != nil || l.Relation != engram.RelMentions || l.From != food.ID || l.To != cat.ID || l.Version != 2 {
			t.Fatalf("create: %+v %v", l, err)
		}
		again, err := db.CreateLink(ctx, engram.Link{From: food.ID, To: cat.ID, Relation: "mentions"})
		if err != nil || again.Version != 2 || !again.CreatedAt.Equal(l.CreatedAt) {
			t.Fatalf("linking again must change nothing: %+v %v", again, err)
		}
		if _, err := db.CreateLink(ctx, engram.Link{From: food.ID, To: cat.ID, Relation: "is fed by owner of"}); err != nil {
			t.Fatalf("free-text relation: %v", err)
		}
		m, _ := db.FindMemoryByID(ctx, food.ID)
		if m.Version != 3 || m.Content != food.Content {
			t.Fatalf("two links must be two versions of the source, content untouched: %+v", m)
		}
		events, err := db.FindMemoryEvents(ctx, food.ID)
		if err != nil || len(events) != 3 || events[1].Action != engram.ActionLink || events[2].Action != engram.ActionLink ||
			len(events[1].Links) != 1 || events[1].Links[0].Relation != engram.RelMentions || events[1].Links[0].To != cat.ID {
			t.Fatalf("history: %d %v", len(events), err)
		}
		changes, err := db.Changes(ctx, 0, 100)
		if err != nil || len(changes) != 5 || len(changes[3].Links) != 1 || changes[3].Action != engram.ActionLink {
			t.Fatalf("the change feed carries the link: %d %v", len(changes), err)
		}
		for _, id := range []string{food.ID, cat.ID} {
			ls, err := db.FindLinks(ctx, id)
			if err != nil || len(ls) != 2 || ls[0].Relation != engram.RelMentions {
				t.Fatalf("links of %s: %+v %v", id, ls, err)
			}
		}
		if ls, err := db.FindLinks(ctx, other.ID); err != nil || len(ls) != 0 {
			t.Fatalf("unlinked memory: %+v %v", ls, err)
		}
		of, err := db.FindLinksOf(ctx, []string{cat.ID, "mem_nope"})
		if err != nil || len(of) != 2 {
			t.Fatalf("links of a set: %+v %v", of, err)
		}

		// Bad input: nothing changes.
		for _, bad := range []struct {
			l    engram.Link
			code string
		}{
			{engram.Link{From: food.ID, To: food.ID}, engram.EINVALID},
			{engram.Link{From: food.ID, To: cat.ID, Relation: "a/b"}, engram.EINVALID},
			{engram.Link{From: food.ID, To: cat.ID, Relation: "x\ty"}, engram.EINVALID},
			{engram.Link{From: food.ID, To: cat.ID, Relation: string(make([]byte, 65))}, engram.EINVALID},
			{engram.Link{From: food.ID, To: "mem_nope"}, engram.ENOTFOUND},
			{engram.Link{From: "mem_nope", To: cat.ID}, engram.ENOTFOUND},
		} {
			_, err := db.CreateLink(ctx, bad.l)
			wantCode(t, err, bad.code)
		}
		_, err = db.DeleteLink(ctx, food.ID, other.ID, "")
		wantCode(t, err, engram.ENOTFOUND)
		_, err = db.DeleteLink(ctx, food.ID, cat.ID, "supports")
		wantCode(t, err, engram.ENOTFOUND)
		if m, _ := db.FindMemoryByID(ctx, food.ID); m.Version != 3 {
			t.Fatalf("refused writes must not add versions: %d", m.Version)
		}

		// A tombstoned end hides the link; a rollback brings it back.
		if _, err := db.DeleteMemory(ctx, cat.ID, nil); err != nil {
			t.Fatal(err)
		}
		if ls, _ := db.FindLinks(ctx, food.ID); len(ls) != 0 {
			t.Fatalf("a deleted end's links must not count: %+v", ls)
		}
		if ls, _ := db.FindLinks(ctx, cat.ID); len(ls) != 0 {
			t.Fatalf("a deleted memory has no live links: %+v", ls)
		}
		_, err = db.CreateLink(ctx, engram.Link{From: other.ID, To: cat.ID})
		wantCode(t, err, engram.ENOTFOUND)
		if _, err := db.RollbackMemory(ctx, cat.ID, 1, nil); err != nil {
			t.Fatal(err)
		}
		if ls, _ := db.FindLinks(ctx, food.ID); len(ls) != 2 {
			t.Fatalf("a revived memory's links count again: %+v", ls)
		}

		removed, err := db.DeleteLink(ctx, food.ID, cat.ID, "")
		if err != nil || len(removed) != 2 {
			t.Fatalf("unlink all relations: %+v %v", removed, err)
		}
		if ls, _ := db.FindLinks(ctx, cat.ID); len(ls) != 0 {
			t.Fatalf("after unlink: %+v", ls)
		}
		events, _ = db.FindMemoryEvents(ctx, food.ID)
		if len(events) != 4 || events[3].Action != engram.ActionUnlink || len(events[3].Links) != 2 {
			t.Fatalf("unlink must be a version: %d", len(events))
		}
	})
}
