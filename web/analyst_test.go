package web_test

import (
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

var (
	breakdownRe = regexp.MustCompile(`(?s)<div class="breakdown" data-score="([^"]+)">(.*?)</div>`)
	factorRe    = regexp.MustCompile(`data-key="([a-z.]+)" data-value="([^"]+)"`)
	recallRe    = regexp.MustCompile(`href="/console/recalls/(rec_[A-Za-z0-9]+)"`)
)

// checkProducts multiplies every breakdown's factors on a page and
// compares the product with the score it shows; it returns how many
// breakdowns it checked.
func checkProducts(t *testing.T, where, body string) int {
	t.Helper()
	n := 0
	for _, m := range breakdownRe.FindAllStringSubmatch(body, -1) {
		score, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatalf("%s: score %q", where, m[1])
		}
		product, keys := 1.0, map[string]bool{}
		for _, f := range factorRe.FindAllStringSubmatch(m[2], -1) {
			v, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				t.Fatalf("%s: factor %s = %q", where, f[1], f[2])
			}
			product *= v
			keys[f[1]] = true
		}
		for _, k := range []string{"factor.relevance", "factor.reward", "factor.confidence", "factor.retention",
			"factor.revision", "factor.superseded", "factor.emotion", "factor.helpfulness"} {
			if !keys[k] {
				t.Errorf("%s: the breakdown lacks %s", where, k)
			}
		}
		if math.Abs(product-score) > 1e-9*math.Max(1, score) {
			t.Errorf("%s: factors multiply to %.6f, the score is %.6f", where, product, score)
		}
		n++
	}
	return n
}

// TestAnalystPages: the feedback stories link to the recall, the recall
// page tells what was injected and what each feedback changed, and every
// breakdown on the memory, recall and playground pages multiplies to its
// score.
func TestAnalystPages(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		secret, _ := e.key(t, "acme")
		f := e.seed(t, "acme")
		c := e.client(t)
		csrf := c.signIn(secret)

		down := c.get("/console/feedback?signal=down")
		if down.Status != http.StatusOK || !strings.Contains(down.Body, "With milk and two sugars.") || strings.Contains(down.Body, "Black, no sugar.") {
			t.Fatalf("thumbs down: %d %.500s", down.Status, down.Body)
		}
		m := recallRe.FindStringSubmatch(down.Body)
		if m == nil {
			t.Fatal("the thumb-down story does not link its recall")
		}
		for q, want := range map[string]int{"rater=" + url.QueryEscape("/rater-1"): 1, "q=" + url.QueryEscape("two sugars"): 1, "q=nothing-like-it": 0,
			"from=2000-01-01&to=2000-01-02": 0, "memory=" + f.Coffee.ID: 2} {
			p := c.get("/console/feedback?" + q)
			if got := strings.Count(p.Body, `class="story card"`); p.Status != http.StatusOK || got != want {
				t.Errorf("feedback?%s: %d, %d stories, want %d", q, p.Status, got, want)
			}
		}
		for _, q := range []string{"signal=sideways", "from=yesterday", "before=-1"} {
			if p := c.get("/console/feedback?" + q); p.Status != http.StatusBadRequest || !strings.Contains(p.Body, `class="error"`) {
				t.Errorf("feedback?%s: %d", q, p.Status)
			}
		}

		rec := c.get("/console/recalls/" + m[1])
		if rec.Status != http.StatusOK {
			t.Fatalf("recall page: %d %.300s", rec.Status, rec.Body)
		}
		for _, want := range []string{"how does the user take coffee", f.Coffee.Content, "How do I take my coffee?",
			"With milk and two sugars.", "fixture down", "rater-1", `class="credited-memory"`, `href="/console/memories/` + f.Coffee.ID} {
			if !strings.Contains(rec.Body, want) {
				t.Errorf("the recall page lacks %q", want)
			}
		}
		if n := checkProducts(t, "recall", rec.Body); n == 0 {
			t.Error("the recall page shows no breakdown")
		}
		if p := c.get("/console/recalls/rec_nosuch"); p.Status != http.StatusNotFound {
			t.Errorf("unknown recall: %d", p.Status)
		}
		mem := c.get("/console/memories/" + f.Coffee.ID)
		if n := checkProducts(t, "memory", mem.Body); n != 1 {
			t.Errorf("the memory page shows %d breakdowns", n)
		}
		if !strings.Contains(mem.Body, `class="why-recall" href="/console/recalls/`+m[1]) || !strings.Contains(mem.Body, "fixture down") {
			t.Error("the memory's history does not name the feedback that made its versions")
		}
		if !strings.Contains(mem.Body, `href="/console/feedback?memory=`+f.Coffee.ID) {
			t.Error("the memory page does not link the feedback that judged it")
		}
		play := c.post("/console/playground", url.Values{"csrf": {csrf}, "query": {"how does the user take coffee"}, "budget": {"300"}})
		if n := checkProducts(t, "playground", play.Body); play.Status != http.StatusOK || n == 0 {
			t.Errorf("playground: %d, %d breakdowns", play.Status, n)
		}
		if p := c.get("/console/learning"); p.Status != http.StatusOK || !strings.Contains(p.Body, `id="learning-charts"`) || !strings.Contains(p.Body, "Recovery: thumbs down") || strings.Count(p.Body, "<svg") < 3 {
			t.Errorf("learning page: %d, %d charts", p.Status, strings.Count(p.Body, "<svg"))
		}
		if p := c.get("/console/no-such-page"); p.Status != http.StatusNotFound || !strings.Contains(p.Body, "No such page.") {
			t.Errorf("404 page: %d", p.Status)
		}
		c.get("/console/lang?to=zh&next=/console/")
		if p := c.get("/console/no-such-page"); !strings.Contains(p.Body, "没有这个页面") || !strings.Contains(p.Body, "未找到") {
			t.Errorf("the 404 page is not in Chinese: %.400s", p.Body)
		}
	})
}

// TestConsoleEdits: each edit makes a new version with the console key
// as actor; refusals change nothing and show the API's message.
func TestConsoleEdits(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		secret, keyID := e.key(t, "acme")
		f := e.seed(t, "acme")
		c := e.client(t)
		csrf := c.signIn(secret)
		ctx := e.ctx(t, "acme")
		path := "/console/memories/" + f.Dentist.ID
		v := func() int64 {
			m, err := e.db.FindMemoryByID(ctx, f.Dentist.ID)
			if err != nil {
				t.Fatal(err)
			}
			return m.Version
		}
		edit := func(form url.Values) *page {
			form.Set("csrf", csrf)
			return c.post(path+"/edit", form)
		}
		cur := strconv.FormatInt(v(), 10)
		for _, tt := range []struct {
			name   string
			form   url.Values
			status int
			msg    string
		}{
			{"empty content", url.Values{"current": {cur}, "content": {"  "}, "priority": {"P2"}}, 400, "content must not be empty"},
			{"bad priority", url.Values{"current": {cur}, "content": {"x"}, "priority": {"P9"}}, 400, "priority must be one of"},
			{"no version", url.Values{"content": {"x"}, "priority": {"P2"}}, 400, "current must be"},
			{"stale version", url.Values{"current": {"99"}, "content": {"x"}, "priority": {"P2"}}, 409, ""},
		} {
			p := edit(tt.form)
			if p.Status != tt.status || !strings.Contains(p.Body, `id="edit-error"`) || !strings.Contains(p.Body, tt.msg) {
				t.Errorf("%s: %d %.300s", tt.name, p.Status, p.Body)
			}
		}
		if p := c.post(path+"/edit", url.Values{"current": {cur}, "content": {"x"}, "priority": {"P2"}}); p.Status != http.StatusForbidden {
			t.Errorf("an edit without CSRF: %d", p.Status)
		}
		if got := strconv.FormatInt(v(), 10); got != cur {
			t.Fatalf("refused edits changed the version to %s", got)
		}

		p := edit(url.Values{"current": {cur}, "content": {"Dentist moved to Thursday at ten"}, "summary": {"dentist Thu"},
			"tags": {"calendar， 牙医"}, "priority": {"P1"}})
		if p.Status != http.StatusSeeOther || !strings.HasSuffix(p.Header.Get("Location"), "?done=edited") {
			t.Fatalf("edit: %d %s", p.Status, p.Header.Get("Location"))
		}
		m, _ := e.db.FindMemoryByID(ctx, f.Dentist.ID)
		if m.Content != "Dentist moved to Thursday at ten" || m.Summary != "dentist Thu" || m.Priority != "P1" ||
			strings.Join(m.Tags, "|") != "calendar|牙医" || !strings.Contains(string(m.Source), keyID) {
			t.Errorf("edited memory %+v", m)
		}
		events, _ := e.db.FindMemoryEvents(ctx, m.ID)
		if last := events[len(events)-1]; last.Actor.KeyID != keyID || last.Version != m.Version {
			t.Errorf("the edit's event %+v", last)
		}
		page := c.get(path + "?done=edited")
		if !strings.Contains(page.Body, "Saved as a new version.") || !strings.Contains(page.Body, "v"+strconv.FormatInt(m.Version, 10)) {
			t.Error("the memory page does not show the new version")
		}

		if _, err := e.db.UpdateMemory(ctx, m.ID, engramNeedsRevision()); err != nil {
			t.Fatal(err)
		}
		cur = strconv.FormatInt(v(), 10)
		if p := c.post(path+"/revised", url.Values{"csrf": {csrf}, "current": {cur}}); p.Status != http.StatusSeeOther {
			t.Errorf("clear needs_revision: %d", p.Status)
		}
		if m, _ := e.db.FindMemoryByID(ctx, f.Dentist.ID); m.NeedsRevision {
			t.Error("needs_revision not cleared")
		}
		cur = strconv.FormatInt(v(), 10)
		if p := c.post(path+"/tombstone", url.Values{"csrf": {csrf}, "current": {"1"}}); p.Status != http.StatusConflict {
			t.Errorf("tombstone over a newer version: %d", p.Status)
		}
		if p := c.post(path+"/tombstone", url.Values{"csrf": {csrf}, "current": {cur}}); p.Status != http.StatusSeeOther {
			t.Errorf("tombstone: %d", p.Status)
		}
		if m, _ := e.db.FindMemoryByID(ctx, f.Dentist.ID); m.Valid {
			t.Error("the memory is still valid after the tombstone")
		}
		if p := c.post("/console/memories/mem_nosuch/revised", url.Values{"csrf": {csrf}, "current": {"1"}}); p.Status != http.StatusNotFound {
			t.Errorf("unknown memory: %d", p.Status)
		}
		if p := c.post("/console/reflections/"+f.Reflection.ID+"/regenerate", url.Values{"csrf": {csrf}}); p.Status != http.StatusSeeOther ||
			!strings.Contains(p.Header.Get("Location"), "?done=") {
			t.Errorf("regenerate: %d %s", p.Status, p.Header.Get("Location"))
		}
	})
}

func engramNeedsRevision() engram.MemoryUpdate {
	yes := true
	return engram.MemoryUpdate{NeedsRevision: &yes}
}
