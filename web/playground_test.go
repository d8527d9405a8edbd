package web_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
	"github.com/engram-memory/engram/web"
)

// cutRecall answers every recall with one fixed Recall, as a recaller
// with a relevance cut would: a pinned identity memory, the memory that
// answers, and candidates left out for each reason.
type cutRecall struct{ rec *engram.Recall }

func (c cutRecall) Recall(_ context.Context, req engram.RecallRequest) (*engram.Recall, error) {
	r := *c.rec
	r.Query, r.TokenBudget = req.Query, req.TokenBudget
	return &r, nil
}

// TestPlaygroundShowsTheCut: the playground shows each injected item's
// match and score, marks pinned context, and lists the candidates left
// out with why (below the cut, superseded with a link to the newer
// memory, the budget, held back) and their match, and marks the memory a
// kind probe let in, in English and Chinese; a recall with nothing left
// out shows no such list.
func TestPlaygroundShowsTheCut(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		rec := &engram.Recall{Route: engram.Route{Intent: engram.IntentAsk, Mode: engram.ModeFactual}, TokensUsed: 21,
			Context: "[Agent Memory]\n- The user's name is Ada Okafor\n- The payments team ships on Tuesdays",
			Items: []engram.RecallItem{
				{ID: "mem_name", Category: "life", Text: "The user's name is Ada Okafor", Tokens: 9, Score: 0.25,
					Breakdown: engram.ScoreBreakdown{Pinned: true, Match: 0.02, Score: 0.25}},
				{ID: "mem_ship", Category: "work", Text: "The payments team ships on Tuesdays", Tokens: 12, Score: 0.25,
					Breakdown: engram.ScoreBreakdown{Match: 0.812, Score: 0.25}},
				{ID: "mem_probe", Category: "work", Text: "Keywords: payments, ship, Tuesday", Tokens: 8, Score: 0.2,
					Breakdown: engram.ScoreBreakdown{Match: 0.7, Score: 0.2, FeatureFactor: 0.1, Explored: true}},
			},
			LeftOut: []engram.RecallItem{
				{ID: "mem_old", Category: "work", Text: "The payments team ships on Mondays", Score: 0.125,
					Breakdown: engram.ScoreBreakdown{Match: 0.794, Superseded: 0.5, SupersededBy: "mem_ship", Cut: "superseded"}},
				{ID: "mem_lunch", Category: "life", Text: "Lunch is at noon", Score: 0.01,
					Breakdown: engram.ScoreBreakdown{Match: 0.031, Cut: "below_cut"}},
				{ID: "mem_long", Category: "work", Text: "The release checklist, in full", Score: 0.2,
					Breakdown: engram.ScoreBreakdown{Match: 0.55, Cut: "budget"}},
				{ID: "mem_held", Category: "work", Text: "Deploys wait for the on-call engineer", Score: 0.18,
					Breakdown: engram.ScoreBreakdown{Match: 0.6, Cut: "held_back"}},
			}}
		e := newEnvOn(t, storetest.OpenWith(t, storetest.Options(t, engine)), func(c *web.Config) { c.Recall = cutRecall{rec} })
		secret, _ := e.key(t, "acme")
		c := e.client(t)
		csrf := c.signIn(secret)
		run := func() *page {
			t.Helper()
			res := c.post("/console/playground", url.Values{"csrf": {csrf}, "query": {"when does the team ship"}, "budget": {"200"}})
			if res.Status != http.StatusOK {
				t.Fatalf("playground: %d %.300s", res.Status, res.Body)
			}
			return res
		}
		res := run()
		items, leftOut, ok := strings.Cut(res.Body, `id="left-out"`)
		if !ok {
			t.Fatalf("no left-out list: %.2000s", res.Body)
		}
		pinnedRow := regexp.MustCompile(`(?s)<tr class="pinned">.*?</tr>`).FindString(items)
		if !strings.Contains(pinnedRow, "mem_name") || !strings.Contains(pinnedRow, "pinned context") || strings.Contains(pinnedRow, "mem_ship") {
			t.Errorf("the pinned memory is not marked as context: %q", pinnedRow)
		}
		for _, want := range []string{`<td class="num item-match">0.812</td>`, `<td class="num item-match">0.020</td>`, "Match"} {
			if !strings.Contains(items, want) {
				t.Errorf("the injected items lack %q", want)
			}
		}
		if n := strings.Count(items, `class="badge warn explored"`); n != 1 || !strings.Contains(items, "explored (kind probe)") {
			t.Errorf("%d items marked explored, want the one a kind probe let in", n)
		}
		for _, tt := range []struct{ id, class, reason, match string }{
			{"mem_old", "cut-superseded", "superseded", "0.794"},
			{"mem_lunch", "cut-below_cut", "below the relevance cut", "0.031"},
			{"mem_long", "cut-budget", "did not fit the budget", "0.550"},
			{"mem_held", "cut-held_back", "held back (exploration)", "0.600"},
		} {
			row := regexp.MustCompile(`(?s)<tr class="` + tt.class + `">.*?</tr>`).FindString(leftOut)
			if !strings.Contains(row, `href="/console/memories/`+tt.id+`"`) || !strings.Contains(html.UnescapeString(row), tt.reason) ||
				!strings.Contains(row, `<td class="num item-match">`+tt.match+`</td>`) {
				t.Errorf("left out %s: row %q, want reason %q and match %s", tt.id, row, tt.reason, tt.match)
			}
			if link := strings.Contains(row, `class="superseded-by" href="/console/memories/mem_ship"`); link != (tt.id == "mem_old") {
				t.Errorf("left out %s: link to the newer memory %v", tt.id, link)
			}
		}

		u, _ := url.Parse(e.srv.URL + "/console/")
		c.http.Jar.SetCookies(u, []*http.Cookie{{Name: "engram_lang", Value: "zh", Path: "/console/"}})
		zh := html.UnescapeString(run().Body)
		for _, want := range []string{"未装入", "固定上下文", "匹配度", "低于相关性截断", "已被更新取代", "超出预算", "探索时暂不注入", "取代它的较新记忆", "试探（记忆类型）"} {
			if !strings.Contains(zh, want) {
				t.Errorf("the Chinese page lacks %q", want)
			}
		}

		rec.LeftOut = nil
		if body := run().Body; strings.Contains(body, `id="left-out"`) {
			t.Error("a recall with nothing left out shows a left-out list")
		}
	})
}
