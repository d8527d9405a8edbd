package web_test

import (
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestMemoryLinksAndAliases: a memory's page lists its links in both
// directions and its aliases, and marks a quarantined or felt memory.
func TestMemoryLinksAndAliases(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		secret, _ := e.key(t, "acme")
		ctx := e.ctx(t, "acme")
		mk := func(m *engram.Memory) *engram.Memory {
			res, err := e.db.CreateMemory(ctx, m)
			if err != nil {
				t.Fatal(err)
			}
			return res.Memory
		}
		felt := 0.7
		cat := mk(&engram.Memory{Content: "We adopted a grey cat called Dumpling", Category: "life", Key: "/user/pet", Source: []byte(`"chat"`), Emotion: &felt})
		food := mk(&engram.Memory{Content: "Dumpling only eats salmon kibble", Category: "life"})
		held := mk(&engram.Memory{Content: "ok thanks", Category: "life", Quarantined: true})
		if _, err := e.db.CreateLink(ctx, engram.Link{From: food.ID, To: cat.ID, Relation: engram.RelMentions}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.SetAlias(ctx, "/user/cat", "/user/pet"); err != nil {
			t.Fatal(err)
		}
		c := e.client(t)
		c.signIn(secret)
		for path, parts := range map[string][]string{
			"/console/memories/" + cat.ID:  {`id="links"`, "← <span class=\"badge\">mentions</span>", food.ID, `id="aliases"`, "/user/cat", `id="emotion"`},
			"/console/memories/" + food.ID: {"→ <span class=\"badge\">mentions</span>", cat.ID},
			"/console/memories/" + held.ID: {`id="quarantined"`},
		} {
			res := c.get(path)
			if res.Status != 200 {
				t.Fatalf("GET %s: %d", path, res.Status)
			}
			for _, p := range parts {
				if !strings.Contains(res.Body, p) {
					t.Errorf("GET %s lacks %q", path, p)
				}
			}
		}
	})
}
