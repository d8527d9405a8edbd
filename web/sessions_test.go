package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/store/storetest"
)

// startSession posts a short conversation to a session of tenant.
func (e *env) startSession(t testing.TB, tenant, id, resource string) {
	t.Helper()
	_, err := e.working.AppendEvents(e.ctx(t, tenant), id, engram.EventBatch{ResourceID: resource, Events: []*engram.SessionEvent{
		{Type: engram.EventQuery, Content: "plan the trip to Kyoto"},
		{Type: engram.EventMessage, Role: "user", Content: "I want to see the temples in 京都"},
		{Type: engram.EventMessage, Role: "assistant", Content: "Kiyomizu-dera first, then Fushimi Inari."},
		{Type: engram.EventToolCall, Name: "weather", Args: []byte(`{"city":"Kyoto"}`), Result: []byte(`{"sky":"clear"}`)},
	}})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSessionPages(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		secret, _ := e.key(t, "acme")
		e.key(t, "other")
		c := e.client(t)
		c.signIn(secret)
		if res := c.get("/console/sessions"); res.Status != 200 || !strings.Contains(res.Body, "empty-sessions") {
			t.Fatalf("no sessions yet: %d, no empty state", res.Status)
		}
		e.startSession(t, "acme", "trip-1", "user-7")
		e.startSession(t, "other", "secret-9", "user-8")

		list := c.get("/console/sessions")
		if list.Status != 200 || !strings.Contains(list.Body, `href="/console/sessions/trip-1"`) || !strings.Contains(list.Body, "user-7") {
			t.Errorf("sessions page: %d, lacks trip-1: %.400s", list.Status, list.Body)
		}
		if strings.Contains(list.Body, "secret-9") {
			t.Error("another tenant's session is listed")
		}
		one := c.get("/console/sessions/trip-1")
		for _, part := range []string{`id="context-text"`, "Kiyomizu-dera first", "京都", "of 1000 tokens used", "tool_call", "weather",
			"plan the trip to Kyoto"} {
			if !strings.Contains(one.Body, part) {
				t.Errorf("session page lacks %q", part)
			}
		}
		if one.Status != 200 {
			t.Errorf("session page: %d", one.Status)
		}
		if small := c.get("/console/sessions/trip-1?token_limit=30"); small.Status != 200 || !strings.Contains(small.Body, "of 30 tokens used") {
			t.Errorf("token_limit 30: %d", small.Status)
		}
		for path, status := range map[string]int{
			"/console/sessions/secret-9":                    http.StatusNotFound,
			"/console/sessions/nope":                        http.StatusNotFound,
			"/console/sessions/trip-1?token_limit=lots":     http.StatusBadRequest,
			"/console/sessions/trip-1?token_limit=0":        http.StatusBadRequest,
			"/console/sessions/trip-1?token_limit=99999999": http.StatusBadRequest,
		} {
			res := c.get(path)
			if res.Status != status {
				t.Errorf("GET %s: %d, want %d", path, res.Status, status)
			}
			if status == http.StatusBadRequest && !strings.Contains(res.Body, `id="context-error"`) {
				t.Errorf("GET %s shows no error", path)
			}
		}
		c.get("/console/lang?to=zh&next=/console/sessions")
		if res := c.get("/console/sessions/trip-1"); !strings.Contains(res.Body, "渲染后的上下文") || !strings.Contains(res.Body, "最近事件") {
			t.Error("the session page is not in Chinese")
		}
	})
}

// TestPagesWithinMaxBudget: the session page renders its context within
// engram.DefaultBudget and the playground offers a budget no larger than
// recall.max_budget, so both hold when max_budget is below their defaults.
func TestPagesWithinMaxBudget(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		cfg := configs.Default()
		cfg.Recall.MaxBudget = 300
		e := newEnvWith(t, storetest.OpenWith(t, storetest.Options(t, engine)), cfg)
		secret, _ := e.key(t, "acme")
		c := e.client(t)
		c.signIn(secret)
		e.startSession(t, "acme", "trip-1", "user-7")
		one := c.get("/console/sessions/trip-1")
		if one.Status != http.StatusOK || strings.Contains(one.Body, `id="context-error"`) || !strings.Contains(one.Body, "of 300 tokens used") {
			t.Errorf("session page with max_budget 300: %d: %.400s", one.Status, one.Body)
		}
		if pg := c.get("/console/playground"); pg.Status != http.StatusOK || !strings.Contains(pg.Body, `max="300" value="300"`) {
			t.Errorf("playground with max_budget 300 does not offer 300: %d", pg.Status)
		}
	})
}

// TestLearningEvidence: the learning page shows the helpfulness factor
// and evidence of a promoted memory, says its impact is not measured yet,
// and lists the rater who kept contradicting the others.
func TestLearningEvidence(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		secret, _ := e.key(t, "acme")
		c := e.client(t)
		c.signIn(secret)
		empty := c.get("/console/learning")
		if empty.Status != 200 || !strings.Contains(empty.Body, "empty-raters") {
			t.Fatalf("learning page of an empty tenant: %d, no empty raters state", empty.Status)
		}
		ctx := e.ctx(t, "acme")
		coffee, err := e.db.CreateMemory(ctx, &engram.Memory{Content: "User drinks coffee black, no sugar", Category: "preference"})
		if err != nil {
			t.Fatal(err)
		}
		vote := func(rater, thumb string) {
			rec, err := e.recall.Recall(ctx, engram.RecallRequest{Query: "how does the user take coffee", TokenBudget: 300})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.feedback.SubmitFeedback(ctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: thumb, Rater: rater}); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range []string{"ann", "bob", "cy", "dee"} {
			vote(r, engram.ThumbUp)
		}
		vote("troll", engram.ThumbDown)
		vote("troll", engram.ThumbDown)

		res := c.get("/console/learning")
		promoted, rest, ok := strings.Cut(res.Body, `id="demoted"`)
		if res.Status != 200 || !ok || !strings.Contains(promoted, coffee.Memory.ID) || !strings.Contains(promoted, `class="num help-factor"`) {
			t.Fatalf("learning page: %d, coffee not promoted with its helpfulness: %.600s", res.Status, res.Body)
		}
		if !strings.Contains(promoted, "not measured") {
			t.Error("an impact without exploration is not said to be unmeasured")
		}
		_, raters, _ := strings.Cut(rest, `id="raters"`)
		if !strings.Contains(raters, "troll") || strings.Contains(raters, ">ann<") || !strings.Contains(raters, "rater-weight") {
			t.Errorf("raters whose weight fell: %.600s", raters)
		}
	})
}
