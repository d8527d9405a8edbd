package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/engram-memory/engram/store/storetest"
)

// TestHistoryPages: history comes in pages of limit events, oldest
// first; next_cursor resumes where a page ended, and the pages together
// are the whole history.
func TestHistoryPages(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		m := create(t, e, key, `{"content":"version one"}`)
		for i := 2; i <= 5; i++ {
			wantStatus(t, e.do(t, "PATCH", "/v1/memories/"+m.ID, key, fmt.Sprintf(`{"summary":"summary %d"}`, i)), http.StatusOK)
		}
		all := history(t, e, key, m.ID)
		if len(all) != 5 {
			t.Fatalf("%d events, want 5", len(all))
		}
		var paged []apiEvent
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 5 {
				t.Fatal("paging does not end")
			}
			path := "/v1/memories/" + m.ID + "/history?limit=2"
			if cursor != "" {
				path += "&cursor=" + cursor
			}
			r := e.do(t, "GET", path, key, "")
			wantStatus(t, r, http.StatusOK)
			var p struct {
				Items      []apiEvent `json:"items"`
				NextCursor string     `json:"next_cursor"`
			}
			if err := json.Unmarshal(r.Body, &p); err != nil {
				t.Fatal(err)
			}
			if len(p.Items) > 2 {
				t.Fatalf("page of %d events with limit 2", len(p.Items))
			}
			paged = append(paged, p.Items...)
			if p.NextCursor == "" {
				break
			}
			cursor = p.NextCursor
		}
		if len(paged) != len(all) {
			t.Fatalf("pages hold %d events, history %d", len(paged), len(all))
		}
		for i := range all {
			if paged[i].Version != all[i].Version || paged[i].Action != all[i].Action {
				t.Errorf("event %d: paged %d %s, whole %d %s", i, paged[i].Version, paged[i].Action, all[i].Version, all[i].Action)
			}
		}
	})
}

// TestPatchSameValuesAddsNoVersion: a patch whose fields already hold
// the values sent changes nothing: 200 with the memory as it was, no new
// version, no history event.
func TestPatchSameValuesAddsNoVersion(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		m := create(t, e, key, `{"content":"steady","category":"work","tags":["a","b"],"summary":"s"}`)
		r := e.do(t, "PATCH", "/v1/memories/"+m.ID, key, `{"content":"steady","category":"work","tags":["a","b"],"summary":"s"}`)
		wantStatus(t, r, http.StatusOK)
		if got := r.memory(t); got.Version != m.Version {
			t.Errorf("version %d after a patch that changed nothing, was %d", got.Version, m.Version)
		}
		if n := len(history(t, e, key, m.ID)); n != 1 {
			t.Errorf("%d history events, want 1", n)
		}
		// A real change still makes a version.
		r = e.do(t, "PATCH", "/v1/memories/"+m.ID, key, `{"summary":"new"}`)
		wantStatus(t, r, http.StatusOK)
		if got := r.memory(t); got.Version != m.Version+1 {
			t.Errorf("version %d after a change, want %d", got.Version, m.Version+1)
		}
	})
}

// TestStrictJSONOutsideTheDecoder: the bodies that are not decoded into a
// request type — a persona sent as JSON, a session's state document and
// its merge patch — refuse a field named twice like every other body, at
// any depth, and change nothing.
func TestStrictJSONOutsideTheDecoder(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSessionEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		wantStatus(t, e.do(t, "PUT", "/v1/agents/ada/persona", key, `{"markdown":"You are Ada."}`), http.StatusOK)
		postEvents(t, e, key, "s1", `{"type":"decision","content":"start"}`)
		wantStatus(t, e.do(t, "PUT", "/v1/sessions/s1/state", key, `{"state":{"step":1,"notes":{"x":1}}}`), http.StatusOK)
		persona := e.do(t, "GET", "/v1/agents/ada/persona", key, "")
		st := e.do(t, "GET", "/v1/sessions/s1/state", key, "")
		for _, tc := range []struct {
			name, method, path, body, field string
			headers                         []string
		}{
			{"persona markdown twice", "PUT", "/v1/agents/ada/persona", `{"markdown":"a","markdown":"b"}`, `"markdown"`, nil},
			{"persona field case", "PUT", "/v1/agents/ada/persona", `{"Markdown":"a"}`, `"Markdown"`, nil},
			{"patch field twice", "PATCH", "/v1/sessions/s1/state", `{"step":2,"step":3}`, `"step"`, []string{"Content-Type", "application/merge-patch+json"}},
			{"patch nested field twice", "PATCH", "/v1/sessions/s1/state", `{"notes":{"y":1,"y":2}}`, `"y"`, nil},
			{"patch in a list", "PATCH", "/v1/sessions/s1/state", `{"plan":[{"a":1,"a":1}]}`, `"a"`, nil},
			{"state field twice", "PUT", "/v1/sessions/s1/state", `{"state":{"step":1,"step":2}}`, `"step"`, nil},
			{"prompt message field case", "POST", "/v1/interactions", `{"prompt":[{"Role":"user","content":"hi"}],"response":"r"}`, "prompt: want", nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do(t, tc.method, tc.path, key, tc.body, tc.headers...)
				wantError(t, r, http.StatusBadRequest, invalid, tc.field)
				sameSnapshot(t, "persona", string(persona.Body), string(e.do(t, "GET", "/v1/agents/ada/persona", key, "").Body))
				sameSnapshot(t, "state", string(st.Body), string(e.do(t, "GET", "/v1/sessions/s1/state", key, "").Body))
			})
		}
	})
}

// TestIDsOnEveryRoute: a session or agent id that is refused on the
// sessions and personas routes is refused on every route that takes one,
// in a body or a query string, before anything is stored.
func TestIDsOnEveryRoute(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSessionEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		create(t, e.env, key, `{"content":"The user drinks green tea","category":"preference"}`)
		before := e.snapshot(t, key)
		for _, tc := range []struct {
			name, method, path, body, field string
		}{
			{"recall session_id", "POST", "/v1/recall", `{"query":"tea","token_budget":100,"session_id":"../x"}`, "session_id"},
			{"recall agent_id", "POST", "/v1/recall", `{"query":"tea","token_budget":100,"agent_id":"a/b"}`, "agent_id"},
			{"prompt session_id", "POST", "/v1/prompt", `{"query":"tea","token_budget":100,"session_id":"../x"}`, "session_id"},
			{"prompt agent_id", "POST", "/v1/prompt", `{"query":"tea","token_budget":100,"agent_id":"a b"}`, "agent_id"},
			{"interaction session_id", "POST", "/v1/interactions", `{"prompt":"p","response":"r","session_id":"../x"}`, "session_id"},
			{"memory agent_id", "POST", "/v1/memories", `{"content":"x","agent_id":"../a"}`, "agent_id"},
			{"batch agent_id", "POST", "/v1/memories/batch", `{"memories":[{"content":"x"},{"content":"y","agent_id":"a/b"}]}`, "agent_id"},
			{"patch agent_id", "PATCH", "/v1/memories/mem_x", `{"agent_id":"a b"}`, "agent_id"},
			{"key write agent_id", "PUT", "/v1/keys/user/x", `{"content":"x","source":"t","agent_id":"a/b"}`, "agent_id"},
			{"key content agent_id", "PUT", "/v1/keys/user/x", `{"content":{"text":"x","agent_id":"a/b"},"source":"t"}`, "agent_id"},
			{"event resource_id", "POST", "/v1/sessions/s1/events", `{"type":"decision","content":"x","resource_id":"../r"}`, "resource_id"},
			{"context agent_id", "GET", "/v1/context?token_limit=100&agent_id=..%2Fx", "", "agent_id"},
			{"boot agent_id", "GET", "/v1/boot?agent_id=a%20b", "", "agent_id"},
			{"list agent_id", "GET", "/v1/memories?agent_id=a%2Fb", "", "agent_id"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do(t, tc.method, tc.path, key, tc.body)
				wantError(t, r, http.StatusBadRequest, invalid, tc.field+" must be 1-128 characters")
				after := e.snapshot(t, key)
				sameSnapshot(t, "alpha's memories", before, after)
			})
		}
	})
}

// TestBatchNamingAKeyTwice: a batch whose items name one key twice is a
// 400 naming the key and both items, never a 409 that no retry mends,
// and writes nothing.
func TestBatchNamingAKeyTwice(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		before := e.snapshot(t, key)
		r := e.do(t, "POST", "/v1/memories/batch", key, `{"memories":[{"content":"a","key":"/k/one","source":"t"},`+
			`{"content":"b"},{"content":"c","key":"/k/one","source":"t"}]}`)
		wantError(t, r, http.StatusBadRequest, invalid, `batch items 0 and 2 both name key "/k/one"`)
		sameSnapshot(t, "alpha's memories", before, e.snapshot(t, key))
		// Distinct keys in one batch are fine.
		r = e.do(t, "POST", "/v1/memories/batch", key, `{"memories":[{"content":"a","key":"/k/one","source":"t"},`+
			`{"content":"c","key":"/k/two","source":"t"}]}`)
		wantStatus(t, r, http.StatusOK)
	})
}

// TestEncodedSlashInKey: %2F in a key URL is refused, not read as a
// separator, so that a key has one spelling; the key written with plain
// slashes is untouched.
func TestEncodedSlashInKey(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		wantStatus(t, e.do(t, "PUT", "/v1/keys/a/b", key, `{"content":"plain","source":"t"}`), http.StatusOK)
		before := e.snapshot(t, key)
		for _, tc := range []struct{ method, path, body string }{
			{"PUT", "/v1/keys/a%2Fb", `{"content":"encoded","source":"t"}`},
			{"PUT", "/v1/keys/a%2fb", `{"content":"encoded","source":"t"}`},
			{"PUT", "/v1/keys/x/a%2Fb", `{"content":"encoded","source":"t"}`},
			{"GET", "/v1/keys/a%2Fb", ""},
			{"DELETE", "/v1/keys/a%2Fb", ""},
		} {
			r := e.raw(t, tc.method, tc.path, key, tc.body)
			wantError(t, r, http.StatusBadRequest, invalid, "encoded slash")
		}
		sameSnapshot(t, "alpha's memories", before, e.snapshot(t, key))
		// Other escapes still decode: %41 is A.
		r := e.raw(t, "GET", "/v1/keys/%61/b", key, "")
		wantStatus(t, r, http.StatusOK)
	})
}
