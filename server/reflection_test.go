package server_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

type reflectResult struct {
	Groups  int                     `json:"groups"`
	Written []engram.ReflectOutcome `json:"written"`
	Skipped []engram.ReflectOutcome `json:"skipped"`
	Failed  []engram.ReflectOutcome `json:"failed"`
}

type reflectionAnswer struct {
	engram.Reflection
	Versions []struct {
		Version int64 `json:"version"`
	} `json:"versions"`
}

func postReflect(t *testing.T, e *env, key, body string) reflectResult {
	t.Helper()
	r := e.do(t, "POST", "/v1/reflect", key, body)
	wantStatus(t, r, http.StatusOK)
	var res reflectResult
	mustDecode(t, r, &res)
	return res
}

var citedID = regexp.MustCompile(`\[(mem_[a-z2-7]+)@(\d+)\]\(/console/memories/(mem_[a-z2-7]+)\)`)

// TestReflections: the reflector writes one reflection per group of three
// or more live memories, citing only the group's memories as links the
// console follows; running it again writes nothing; a changed group gets a
// new version; memory text cannot inject HTML; files mirror the rows.
func TestReflections(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, _ := e.tenant(t, "acme")
		other, _ := e.tenant(t, "globex")

		if res := postReflect(t, e.env, key, ""); res.Groups != 0 || len(res.Written) != 0 {
			t.Fatalf("empty tenant: %+v", res)
		}
		wantError(t, e.do(t, "POST", "/v1/reflect", key, `{"category":"nope"}`), http.StatusBadRequest, "invalid", "nope")
		wantError(t, e.do(t, "POST", "/v1/reflect", key, `{"categry":"work"}`), http.StatusBadRequest, "invalid")

		ids := map[string]string{}
		add := func(name, body string) {
			ids[name] = create(t, e.env, key, body).ID
		}
		add("cutover", `{"content":"Falcon cutover is planned for Saturday night","category":"work","subcategory":"falcon"}`)
		add("rollback", `{"content":"Falcon rollback takes 40 minutes on the staging cluster","category":"work","subcategory":"falcon"}`)
		add("script", `{"content":"Falcon runbook says <script>alert(1)</script> in the header","category":"work","subcategory":"falcon"}`)
		add("img", `{"content":"Falcon dashboard <img src=x onerror=alert(1)> is broken","category":"work","subcategory":"falcon"}`)
		add("dentist1", `{"content":"Dentist appointment moved to Tuesday at 10","category":"life","tags":["dentist"]}`)
		add("dentist2", `{"content":"The dentist said to floss every night","category":"life","tags":["dentist"]}`)
		add("dentist3", `{"content":"Dentist bill was 120 dollars","category":"life","tags":["dentist"]}`)
		add("zh1", `{"content":"我喝咖啡不加糖","category":"preference"}`)
		add("zh2", `{"content":"我不吃香菜","category":"preference"}`)
		add("zh3", `{"content":"周末喜欢去爬山","category":"preference"}`)
		add("lonely", `{"content":"Felt lonely on Sunday","category":"emotion"}`)
		for _, rater := range []string{"a", "b", "c"} {
			wantStatus(t, e.do(t, "POST", "/v1/feedback", key, `{"memory_id":"`+ids["rollback"]+`","thumb":"down","rater":"`+rater+`"}`), http.StatusCreated)
		}
		wantStatus(t, e.do(t, "POST", "/v1/feedback", key, `{"memory_id":"`+ids["cutover"]+`","thumb":"up","rater":"a"}`), http.StatusCreated)

		res := postReflect(t, e.env, key, "{}")
		var groups []string
		for _, w := range res.Written {
			groups = append(groups, w.Group)
		}
		slices.Sort(groups)
		if res.Groups != 3 || len(res.Failed) != 0 || !slices.Equal(groups, []string{"life#dentist", "preference", "work/falcon"}) {
			t.Fatalf("first reflect: %+v", res)
		}
		if again := postReflect(t, e.env, key, ""); len(again.Written) != 0 || len(again.Skipped) != 3 {
			t.Fatalf("second reflect wrote again: %+v", again)
		}

		members := map[string][]string{"work/falcon": {"cutover", "rollback", "script", "img"},
			"life#dentist": {"dentist1", "dentist2", "dentist3"}, "preference": {"zh1", "zh2", "zh3"}}
		tenant, err := e.db.FindTenant(context.Background(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		byGroup := map[string]reflectionAnswer{}
		for _, w := range res.Written {
			r := e.do(t, "GET", "/v1/reflections/"+w.ID, key, "")
			wantStatus(t, r, http.StatusOK)
			var got reflectionAnswer
			mustDecode(t, r, &got)
			byGroup[w.Group] = got
			allowed := map[string]bool{}
			for _, name := range members[w.Group] {
				allowed[ids[name]] = true
			}
			cites := citedID.FindAllStringSubmatch(got.Markdown, -1)
			if len(cites) == 0 || len(got.Cited) == 0 || len(got.Members) != len(members[w.Group]) {
				t.Fatalf("%s: %d citations, cited %v, members %v:\n%s", w.Group, len(cites), got.Cited, got.Members, got.Markdown)
			}
			for _, c := range cites {
				if !allowed[c[1]] || c[1] != c[3] {
					t.Fatalf("%s cites %s, not one of its members:\n%s", w.Group, c[1], got.Markdown)
				}
			}
			if len(got.Versions) != 1 || got.Version != 1 || got.Writer != "extractive" {
				t.Fatalf("%s: version %d, writer %q, history %+v", w.Group, got.Version, got.Writer, got.Versions)
			}
			file := filepath.Join(e.dir, tenant.ID, got.Category, map[string]string{"work/falcon": "sub-falcon", "life#dentist": "tag-dentist", "preference": "all"}[w.Group]+".md")
			if b, err := os.ReadFile(file); err != nil || string(b) != got.Markdown {
				t.Fatalf("%s: file %s: %v", w.Group, file, err)
			}
		}
		falcon := byGroup["work/falcon"]
		t.Logf("work/falcon:\n%s\npreference:\n%s", falcon.Markdown, byGroup["preference"].Markdown)
		for _, want := range []string{"## What is known", "## What worked", "## What failed or misled", "## Contradictions", "## Open questions"} {
			if !strings.Contains(falcon.Markdown, want) {
				t.Errorf("work/falcon lacks %q:\n%s", want, falcon.Markdown)
			}
		}
		failed := falcon.Markdown[strings.Index(falcon.Markdown, "## What failed"):]
		if !strings.Contains(failed, ids["rollback"]) || !strings.Contains(falcon.Markdown[strings.Index(falcon.Markdown, "## What worked"):], ids["cutover"]) {
			t.Errorf("votes not reflected:\n%s", falcon.Markdown)
		}
		if strings.Contains(falcon.HTML, "<script") || strings.Contains(falcon.HTML, "<img") ||
			!strings.Contains(falcon.HTML, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(falcon.HTML, "<h2>") ||
			!strings.Contains(falcon.HTML, `<a href="/console/memories/`+ids["cutover"]+`">`) {
			t.Errorf("unsafe or unrendered HTML:\n%s", falcon.HTML)
		}
		if zh := byGroup["preference"].Markdown; !strings.Contains(zh, "## 已知") || !strings.Contains(zh, "# 偏好") {
			t.Errorf("Chinese group reads:\n%s", zh)
		}

		// A query that looks back injects the reflection beside memories,
		// within the budget, and feedback on it is counted on it.
		rec := postRecall(t, e.env, key, map[string]any{"query": "What have I learned about the Falcon cutover and rollback?", "token_budget": 400})
		var injected *engram.RecallItem
		for i, it := range rec.Items {
			if it.ID == falcon.ID {
				injected = &rec.Items[i]
			}
		}
		if rec.Route.Intent != engram.IntentReflect || injected == nil || !strings.Contains(rec.Context, "Falcon cutover is planned") ||
			strings.Contains(rec.Context, "/console/") || rec.TokensUsed > 400 {
			t.Fatalf("reflect recall: intent %s, items %+v\n%s", rec.Route.Intent, rec.Items, rec.Context)
		}
		r := e.do(t, "POST", "/v1/feedback", key, `{"recall_id":"`+rec.ID+`","thumb":"up","rater":"r1"}`)
		wantStatus(t, r, http.StatusCreated)
		var fb engram.FeedbackResult
		mustDecode(t, r, &fb)
		if len(fb.Reflections) != 1 || fb.Reflections[0].ID != falcon.ID || fb.Reflections[0].UpCount != 1 {
			t.Fatalf("feedback on a recall with a reflection: %+v", fb)
		}
		r = e.do(t, "GET", "/v1/reflections/"+falcon.ID, key, "")
		var counted reflectionAnswer
		mustDecode(t, r, &counted)
		if counted.UpCount != 1 || counted.Version != 1 {
			t.Fatalf("reflection after feedback: up %d, version %d", counted.UpCount, counted.Version)
		}

		// A member changes: only its group is written again, as version 2.
		wantStatus(t, e.do(t, "PATCH", "/v1/memories/"+ids["dentist3"], key, `{"content":"Dentist bill was 150 dollars"}`), http.StatusOK)
		res = postReflect(t, e.env, key, `{"category":"life"}`)
		if len(res.Written) != 1 || res.Written[0].Group != "life#dentist" || res.Written[0].Version != 2 {
			t.Fatalf("after an edit: %+v", res)
		}
		r = e.do(t, "GET", "/v1/reflections/"+res.Written[0].ID, key, "")
		var dentist reflectionAnswer
		mustDecode(t, r, &dentist)
		if len(dentist.Versions) != 2 || !strings.Contains(dentist.Markdown, "150 dollars") {
			t.Fatalf("version 2: %d versions:\n%s", len(dentist.Versions), dentist.Markdown)
		}

		// Listing, filtering and paging.
		r = e.do(t, "GET", "/v1/reflections?limit=2", key, "")
		wantStatus(t, r, http.StatusOK)
		var page struct {
			Items      []engram.Reflection `json:"items"`
			NextCursor string              `json:"next_cursor"`
		}
		mustDecode(t, r, &page)
		if len(page.Items) != 2 || page.NextCursor == "" || page.Items[0].HTML != "" {
			t.Fatalf("first page: %d items, cursor %q", len(page.Items), page.NextCursor)
		}
		r = e.do(t, "GET", "/v1/reflections?limit=2&cursor="+page.NextCursor, key, "")
		page.NextCursor = ""
		mustDecode(t, r, &page)
		if len(page.Items) != 1 || page.NextCursor != "" {
			t.Fatalf("second page: %d items", len(page.Items))
		}
		r = e.do(t, "GET", "/v1/reflections?category=work", key, "")
		mustDecode(t, r, &page)
		if len(page.Items) != 1 || page.Items[0].Group != "work/falcon" {
			t.Fatalf("category filter: %+v", page.Items)
		}

		// Bad input and other tenants.
		wantError(t, e.do(t, "GET", "/v1/reflections/"+falcon.ID, other, ""), http.StatusNotFound, "not_found")
		wantError(t, e.do(t, "GET", "/v1/reflections/refl_unknown", key, ""), http.StatusNotFound, "not_found")
		wantError(t, e.do(t, "GET", "/v1/reflections?limit=0", key, ""), http.StatusBadRequest, "invalid")
		wantError(t, e.do(t, "GET", "/v1/reflections?sort=new", key, ""), http.StatusBadRequest, "invalid")
		wantError(t, e.do(t, "GET", "/v1/reflections?cursor=forged", key, ""), http.StatusBadRequest, "invalid")
		if res := postReflect(t, e.env, other, ""); res.Groups != 0 {
			t.Fatalf("another tenant sees acme's memories: %+v", res)
		}
		r = e.do(t, "GET", "/v1/reflections", other, "")
		mustDecode(t, r, &page)
		if len(page.Items) != 0 {
			t.Fatalf("another tenant lists acme's reflections: %d", len(page.Items))
		}
	})
}
