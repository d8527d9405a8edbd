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
