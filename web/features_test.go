package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestLearnedFeaturesSection: the learning page says no kind of memory
// stands out in a fresh tenant; once answers resting on keyword lists
// keep going wrong and those resting on sentences go well, it lists the
// list shape among the distrusted features, in a table and an SVG chart,
// in English and Chinese.
func TestLearnedFeaturesSection(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		secret, _ := e.key(t, "acme")
		c := e.client(t)
		c.signIn(secret)
		if res := c.get("/console/learning"); res.Status != 200 || !strings.Contains(res.Body, `id="empty-features"`) {
			t.Fatalf("learning page of a fresh tenant: %d, no empty features state", res.Status)
		}
		ctx := e.ctx(t, "acme")
		for i := range 30 {
			for _, v := range []struct{ content, thumb string }{
				{fmt.Sprintf("Keywords: tea%d, milk, sugar, kettle", i), engram.ThumbDown},
				{fmt.Sprintf("The user moved to Lisbon in spring %d and works as a nurse there.", 2000+i), engram.ThumbUp},
			} {
				res, err := e.db.CreateMemory(ctx, &engram.Memory{Content: v.content, Category: "life"})
				if err != nil {
					t.Fatal(err)
				}
				m := res.Memory
				rec := &engram.Recall{Query: "q", TokenBudget: 100, CreatedAt: time.Now(),
					Items: []engram.RecallItem{{ID: m.ID, Version: m.Version, Category: m.Category, Text: m.Content, Score: 0.5}}}
				if err := e.db.SaveRecall(ctx, rec, "", ""); err != nil {
					t.Fatal(err)
				}
				if _, err := e.feedback.SubmitFeedback(ctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: v.thumb,
					Rater: fmt.Sprintf("user%d", i)}); err != nil {
					t.Fatal(err)
				}
			}
		}
		res := c.get("/console/learning")
		_, sec, ok := strings.Cut(res.Body, `id="features"`)
		if res.Status != 200 || !ok || !strings.Contains(sec, "<svg") {
			t.Fatalf("learning page: %d, no features section with a chart: %.400s", res.Status, sec)
		}
		distrusted := false
		for _, row := range strings.Split(sec, `<tr class="feature-distrust">`)[1:] {
			distrusted = distrusted || strings.HasPrefix(row, "<td>shape=list</td>")
		}
		if !distrusted || strings.Contains(sec, `id="empty-features"`) {
			t.Errorf("the list shape is not among the distrusted features: %.1200s", sec)
		}
		c.setCookie(&http.Cookie{Name: "engram_lang", Value: "zh"})
		if zh := c.get("/console/learning"); !strings.Contains(zh.Body, "学到的特征") {
			t.Error("the features section has no Chinese title")
		}
	})
}
