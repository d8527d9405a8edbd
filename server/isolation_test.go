package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/engram-memory/engram/store/storetest"
)

// TestTenantIsolation: tenant beta can neither read, list, search, change,
// roll back, see the history of, nor infer the existence of anything of
// tenant alpha. For every endpoint, alpha's ids and keys answer exactly
// like ids and keys that never existed, and alpha's data is unchanged
// afterwards.
func TestTenantIsolation(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		beta, _ := e.tenant(t, "beta")

		// alpha: a memory updated once, a keyed memory, a deleted and an
		// archived memory, all with words beta never writes.
		a1 := create(t, e, alpha, `{"content":"Zanzibar launch codes are hidden","category":"work","tags":["zanzitag"],"agent_id":"zanziagent"}`)
		wantStatus(t, e.do(t, "PATCH", "/v1/memories/"+a1.ID, alpha, `{"needs_revision":true}`), http.StatusOK)
		a2r := e.do(t, "PUT", "/v1/keys/project/zanzibar/plan", alpha, `{"content":{"text":"Zanzibar plan ships Friday"},"source":"alpha"}`)
		wantStatus(t, a2r, http.StatusOK)
		a2 := a2r.memory(t)
		a3 := create(t, e, alpha, `{"content":"Zanzibar deleted diary entry","tags":["zanzitag"]}`)
		wantStatus(t, e.do(t, "DELETE", "/v1/memories/"+a3.ID, alpha, ""), http.StatusOK)
		a4 := create(t, e, alpha, `{"content":"Zanzibar archived plan","tags":["zanzitag"]}`)
		wantStatus(t, e.do(t, "PATCH", "/v1/memories/"+a4.ID, alpha, `{"archived":true}`), http.StatusOK)
		alphaCursor := nextCursor(t, e, alpha, "/v1/memories?limit=1")
		alphaIDs := []string{a1.ID, a2.ID, a3.ID, a4.ID}

		b1 := create(t, e, beta, `{"content":"Beta grocery list","category":"work"}`)
		alphaBefore := e.snapshot(t, alpha)

		// leaks reports any trace of alpha in a response to beta.
		leaks := func(t *testing.T, r *response) {
			t.Helper()
			body := strings.ToLower(string(r.Body))
			for _, s := range append([]string{"zanzibar", "zanzitag", "zanziagent"}, alphaIDs...) {
				if strings.Contains(body, strings.ToLower(s)) {
					t.Errorf("beta sees %q: %s", s, r)
				}
			}
		}

		// Every endpoint that takes an id: alpha's ids against an id that
		// never existed.
		const unknown = "mem_aaaaaaaaaaaaaaaaaaaa"
		byID := []struct {
			name, method, suffix, body string
			headers                    []string
		}{
			{"get", "GET", "", "", nil},
			{"history", "GET", "/history", "", nil},
			{"patch", "PATCH", "", `{"content":"beta was here"}`, nil},
			{"patch with If-Match", "PATCH", "", `{"content":"beta was here"}`, []string{"If-Match", `"1"`}},
			{"patch archive", "PATCH", "", `{"archived":false}`, nil},
			{"delete", "DELETE", "", "", nil},
			{"delete with If-Match", "DELETE", "", "", []string{"If-Match", `"2"`}},
			{"rollback", "POST", "/rollback", `{"version":1}`, nil},
			{"rollback with If-Match", "POST", "/rollback", `{"version":1}`, []string{"If-Match", `"2"`}},
		}
		for _, ep := range byID {
			t.Run(ep.name, func(t *testing.T) {
				want := e.do(t, ep.method, "/v1/memories/"+unknown+ep.suffix, beta, ep.body, ep.headers...)
				wantError(t, want, http.StatusNotFound, notFound)
				for _, id := range alphaIDs {
					got := e.do(t, ep.method, "/v1/memories/"+id+ep.suffix, beta, ep.body, ep.headers...)
					if got.Status != want.Status || string(got.Body) != string(want.Body) {
						t.Errorf("%s alpha's %s: %s; for an unknown id: %s", ep.method, id, got, want)
					}
					leaks(t, got)
				}
			})
		}

		// Every endpoint that takes a key: alpha's key against a key that
		// was never written.
		byKey := []struct {
			name, method, body string
		}{
			{"get key", "GET", ""},
			{"delete key", "DELETE", ""},
			{"tombstone key", "PUT", `{"content":null,"source":"beta"}`},
		}
		for _, ep := range byKey {
			t.Run(ep.name, func(t *testing.T) {
				want := e.do(t, ep.method, "/v1/keys/project/nothing/plan", beta, ep.body)
				got := e.do(t, ep.method, "/v1/keys/project/zanzibar/plan", beta, ep.body)
				wantError(t, got, http.StatusNotFound, notFound)
				if got.Status != want.Status || string(got.Body) != string(want.Body) {
					t.Errorf("%s alpha's key: %s; for an unknown key: %s", ep.method, got, want)
				}
				leaks(t, got)
			})
		}

		// Lists: every filter, alone and together, shows beta's own only.
		for _, q := range []string{
			"", "q=zanzibar", "q=launch+codes", "q=plan", "tag=zanzitag", "key_prefix=/", "key_prefix=/project",
			"key_prefix=/project/zanzibar/plan", "category=work", "agent_id=zanziagent", "needs_revision=true",
			"include_deleted=true", "include_archived=true", "include_deleted=true&include_archived=true&limit=500",
			"q=zanzibar&include_deleted=true&include_archived=true", "tag=zanzitag&include_deleted=true&include_archived=true",
			"key_prefix=/project&include_deleted=true",
		} {
			t.Run("list "+q, func(t *testing.T) {
				r := e.do(t, "GET", "/v1/memories?"+q, beta, "")
				wantStatus(t, r, http.StatusOK)
				leaks(t, r)
				for _, id := range r.page(t).ids(t) {
					if id != b1.ID {
						t.Errorf("beta's list shows %s", id)
					}
				}
			})
		}
		t.Run("alpha's cursor", func(t *testing.T) {
			for _, q := range []string{"limit=1&cursor=", "cursor=", "limit=1&include_deleted=true&cursor="} {
				r := e.do(t, "GET", "/v1/memories?"+q+url.QueryEscape(alphaCursor), beta, "")
				wantError(t, r, http.StatusBadRequest, invalid, "cursor")
				leaks(t, r)
			}
		})

		// Beta's writes make beta's own memories.
		t.Run("same key", func(t *testing.T) {
			r := e.do(t, "PUT", "/v1/keys/project/zanzibar/plan", beta, `{"content":"beta's own plan","source":"beta"}`)
			wantStatus(t, r, http.StatusOK)
			if m := r.memory(t); m.ID == a2.ID || m.Version != 1 || m.Content != "beta's own plan" {
				t.Errorf("beta's PUT of alpha's key: %s", r)
			}
			if g := e.do(t, "GET", "/v1/keys/project/zanzibar/plan", alpha, "").memory(t); g.ID != a2.ID || g.Content != "Zanzibar plan ships Friday" {
				t.Errorf("alpha's key after beta's PUT: %+v", g)
			}
			r = e.do(t, "DELETE", "/v1/keys/project/zanzibar/plan", beta, "")
			wantStatus(t, r, http.StatusOK)
			wantStatus(t, e.do(t, "GET", "/v1/keys/project/zanzibar/plan", alpha, ""), http.StatusOK)
		})
		t.Run("same key by POST", func(t *testing.T) {
			r := e.do(t, "POST", "/v1/memories", beta, `{"content":"beta posts a key","key":"/project/zanzibar/plan","source":"beta"}`)
			wantError(t, r, http.StatusConflict, conflict) // beta's own key, written above
			r = e.do(t, "POST", "/v1/memories", beta, `{"content":"beta posts another key","key":"/project/zanzibar/other","source":"beta"}`)
			wantStatus(t, r, http.StatusCreated)
		})
		t.Run("same content", func(t *testing.T) {
			r := e.do(t, "POST", "/v1/memories", beta, `{"content":"Zanzibar launch codes are hidden","category":"work"}`)
			wantStatus(t, r, http.StatusCreated)
			if r.object(t)["deduplicated"] != false || r.memory(t).ID == a1.ID {
				t.Errorf("beta's copy of alpha's content: %s", r)
			}
		})
		t.Run("alpha's id as a key", func(t *testing.T) {
			r := e.do(t, "PUT", "/v1/keys/"+a1.ID, beta, `{"content":"beta's key named like alpha's id","source":"beta"}`)
			wantStatus(t, r, http.StatusOK)
			if m := r.memory(t); m.ID == a1.ID || m.Key != "/"+a1.ID {
				t.Errorf("PUT /v1/keys/<alpha's id>: %s", r)
			}
		})

		sameSnapshot(t, "alpha's memories", alphaBefore, e.snapshot(t, alpha))
	})
}
