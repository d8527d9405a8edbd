package server_test

import (
	"net/http"
	"testing"

	"github.com/engram-memory/engram/store/storetest"
)

type apiLink struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Relation string `json:"relation"`
	Version  int64  `json:"version"`
}

// TestLinkRoutes: POST links, GET lists both directions, DELETE unlinks one
// relation or all; another tenant sees nothing; bad input is a 4xx that
// changes nothing.
func TestLinkRoutes(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		other, _ := e.tenant(t, "beta")
		cat := create(t, e, key, `{"content":"We adopted a grey cat called Dumpling","category":"life"}`)
		food := create(t, e, key, `{"content":"She only eats salmon kibble","category":"life"}`)

		r := e.do(t, "POST", "/v1/memories/"+food.ID+"/links", key, `{"to":"`+cat.ID+`","relation":"mentions"}`)
		wantStatus(t, r, http.StatusOK)
		var l apiLink
		mustDecode(t, r, &l)
		if l.From != food.ID || l.To != cat.ID || l.Relation != "mentions" || l.Version != 2 {
			t.Fatalf("link: %+v", l)
		}
		wantStatus(t, e.do(t, "POST", "/v1/memories/"+food.ID+"/links", key, `{"to":"`+cat.ID+`"}`), http.StatusOK)
		var page struct{ Items []apiLink }
		r = e.do(t, "GET", "/v1/memories/"+cat.ID+"/links", key, "")
		wantStatus(t, r, http.StatusOK)
		mustDecode(t, r, &page)
		if len(page.Items) != 2 || page.Items[0].Relation != "mentions" || page.Items[1].Relation != "related" {
			t.Fatalf("links of the target: %+v", page.Items)
		}

		before := e.snapshot(t, key)
		for _, bad := range []struct {
			method, path, body string
			status             int
			code               string
		}{
			{"POST", "/v1/memories/" + food.ID + "/links", `{"relation":"mentions"}`, 400, "invalid"},
			{"POST", "/v1/memories/" + food.ID + "/links", `{"to":"` + food.ID + `"}`, 400, "invalid"},
			{"POST", "/v1/memories/" + food.ID + "/links", `{"to":"` + cat.ID + `","relation":"a/b"}`, 400, "invalid"},
			{"POST", "/v1/memories/" + food.ID + "/links", `{"to":"` + cat.ID + `","weight":1}`, 400, "invalid"},
			{"POST", "/v1/memories/" + food.ID + "/links", `{"to":"mem_nope"}`, 404, "not_found"},
			{"POST", "/v1/memories/mem_nope/links", `{"to":"` + cat.ID + `"}`, 404, "not_found"},
			{"GET", "/v1/memories/mem_nope/links", "", 404, "not_found"},
			{"DELETE", "/v1/memories/" + food.ID + "/links/" + cat.ID + "/supports", "", 404, "not_found"},
			{"DELETE", "/v1/memories/" + cat.ID + "/links/" + food.ID, "", 404, "not_found"},
		} {
			wantError(t, e.do(t, bad.method, bad.path, key, bad.body), bad.status, bad.code)
		}
		wantError(t, e.do(t, "GET", "/v1/memories/"+cat.ID+"/links", other, ""), 404, "not_found")
		wantError(t, e.do(t, "POST", "/v1/memories/"+food.ID+"/links", other, `{"to":"`+cat.ID+`"}`), 404, "not_found")
		sameSnapshot(t, "memories after refused link writes", before, e.snapshot(t, key))

		r = e.do(t, "DELETE", "/v1/memories/"+food.ID+"/links/"+cat.ID+"/mentions", key, "")
		wantStatus(t, r, http.StatusOK)
		var removed struct{ Removed []apiLink }
		mustDecode(t, r, &removed)
		if len(removed.Removed) != 1 || removed.Removed[0].Relation != "mentions" {
			t.Fatalf("unlink one relation: %+v", removed)
		}
		wantStatus(t, e.do(t, "DELETE", "/v1/memories/"+food.ID+"/links/"+cat.ID, key, ""), http.StatusOK)
		r = e.do(t, "GET", "/v1/memories/"+food.ID+"/links", key, "")
		mustDecode(t, r, &page)
		if len(page.Items) != 0 {
			t.Fatalf("after unlink: %+v", page.Items)
		}
	})
}
