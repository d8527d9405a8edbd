package web_test

import (
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestMemoryLinksAndAliases: a memory's page lists its links in both
// directions and its aliases, and marks a quarantined or felt memory; a
// felt memory's breakdown shows its emotion factor, 1 + 0.05 × 0.7, in
// the product (memory page and playground).
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
		csrf := c.signIn(secret)
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
		want := `data-key="factor.emotion" data-value="` + strconv.FormatFloat(1+engram.EmotionTieBreak*felt, 'g', -1, 64) + `"`
		page := c.get("/console/memories/" + cat.ID)
		if !strings.Contains(page.Body, want) || checkProducts(t, "felt memory", page.Body) != 1 {
			t.Errorf("the felt memory's breakdown lacks %s", want)
		}
		play := c.post("/console/playground", url.Values{"csrf": {csrf}, "query": {"grey cat called Dumpling"}, "budget": {"300"}})
		if !strings.Contains(play.Body, want) || checkProducts(t, "playground", play.Body) == 0 {
			t.Errorf("the playground's breakdown lacks %s: %d", want, play.Status)
		}
	})
}
