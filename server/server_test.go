package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/server"
	"github.com/engram-memory/engram/store/storetest"
)

type apiEvent struct {
	Version int64      `json:"version"`
	Action  string     `json:"action"`
	Before  *apiMemory `json:"before"`
	After   *apiMemory `json:"after"`
	Actor   struct {
		KeyID     string `json:"key_id"`
		RequestID string `json:"request_id"`
	} `json:"actor"`
}

func history(t *testing.T, e *env, key, id string) []apiEvent {
	t.Helper()
	r := e.do(t, "GET", "/v1/memories/"+id+"/history", key, "")
	wantStatus(t, r, http.StatusOK)
	var p struct {
		Items []apiEvent `json:"items"`
	}
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatal(err)
	}
	return p.Items
}

func wantETag(t *testing.T, r *response, version int64) {
	t.Helper()
	if got, want := r.Header.Get("ETag"), fmt.Sprintf(`"%d"`, version); got != want {
		t.Errorf("ETag = %q, want %q", got, want)
	}
}

// TestMemoryLifecycle: create, deduplicate, get, update with If-Match,
// history, rollback and delete through HTTP.
func TestMemoryLifecycle(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		alpha, alphaKeyID := e.tenant(t, "alpha")
		const original = "The user prefers dark roast coffee"

		r := e.do(t, "POST", "/v1/memories", alpha, `{"content":"`+original+`","category":"preference","tags":["coffee"],"priority":"P1"}`)
		wantStatus(t, r, http.StatusCreated)
		wantETag(t, r, 1)
		if r.object(t)["deduplicated"] != false {
			t.Errorf("a new memory is not deduplicated: %s", r)
		}
		m := r.memory(t)
		if !strings.HasPrefix(m.ID, "mem_") || m.Version != 1 || !m.Valid || m.Content != original || m.Category != "preference" ||
			!slices.Equal(m.Tags, []string{"coffee"}) {
			t.Fatalf("created %+v", m)
		}

		for _, body := range []string{
			`{"content":"` + original + `","category":"preference"}`,
			`{"content":"  The user prefers\n dark roast   coffee ","category":"preference","tags":["other"]}`,
		} {
			r = e.do(t, "POST", "/v1/memories", alpha, body)
			wantStatus(t, r, http.StatusOK)
			if r.object(t)["deduplicated"] != true || r.memory(t).ID != m.ID || r.memory(t).Version != 1 {
				t.Errorf("identical content: want the same memory, deduplicated: %s", r)
			}
		}

		r = e.do(t, "GET", "/v1/memories/"+m.ID, alpha, "")
		wantStatus(t, r, http.StatusOK)
		wantETag(t, r, 1)
		if r.memory(t).ID != m.ID {
			t.Fatalf("GET returned %s", r)
		}

		r = e.do(t, "PATCH", "/v1/memories/"+m.ID, alpha, `{"content":"The user prefers light roast coffee","tags":["coffee","morning"]}`,
			"If-Match", `"1"`, "X-Request-ID", "patch-1")
		wantStatus(t, r, http.StatusOK)
		wantETag(t, r, 2)
		if p := r.memory(t); p.Version != 2 || p.Content != "The user prefers light roast coffee" || !slices.Equal(p.Tags, []string{"coffee", "morning"}) {
			t.Fatalf("patched %+v", p)
		}
		r = e.do(t, "PATCH", "/v1/memories/"+m.ID, alpha, `{"summary":"roast","version":2}`)
		wantStatus(t, r, http.StatusOK)
		wantETag(t, r, 3)

		h := history(t, e, alpha, m.ID)
		if len(h) != 3 || h[0].Action != "create" || h[1].Action != "update" || h[2].Action != "update" {
			t.Fatalf("history = %+v", h)
		}
		if h[0].Before != nil || h[0].After.Content != original || h[1].Before.Content != original ||
			h[1].After.Content != "The user prefers light roast coffee" || h[1].Version != 2 {
			t.Errorf("history states: %+v", h)
		}
		if h[1].Actor.KeyID != alphaKeyID || h[1].Actor.RequestID != "patch-1" {
			t.Errorf("actor = %+v, want key %s and request patch-1", h[1].Actor, alphaKeyID)
		}

		r = e.do(t, "POST", "/v1/memories/"+m.ID+"/rollback", alpha, `{"version":1}`, "If-Match", `W/"3"`)
		wantStatus(t, r, http.StatusOK)
		wantETag(t, r, 4)
		if rb := r.memory(t); rb.Version != 4 || rb.Content != original || !slices.Equal(rb.Tags, []string{"coffee"}) || rb.ID != m.ID {
			t.Fatalf("rolled back %+v", rb)
		}
		if h := history(t, e, alpha, m.ID); len(h) != 4 || h[3].Action != "rollback" || h[3].After.Content != original {
			t.Fatalf("history after rollback = %+v", h)
		}

		r = e.do(t, "DELETE", "/v1/memories/"+m.ID, alpha, "", "If-Match", "4")
		wantStatus(t, r, http.StatusOK)
		wantETag(t, r, 5)
		if d := r.memory(t); d.Valid || d.Version != 5 {
			t.Fatalf("deleted %+v", d)
		}
		if ids := e.do(t, "GET", "/v1/memories", alpha, "").page(t).ids(t); slices.Contains(ids, m.ID) {
			t.Errorf("list shows a deleted memory: %v", ids)
		}
		if ids := e.do(t, "GET", "/v1/memories?include_deleted=true", alpha, "").page(t).ids(t); !slices.Contains(ids, m.ID) {
			t.Errorf("include_deleted hides the deleted memory: %v", ids)
		}
		r = e.do(t, "GET", "/v1/memories/"+m.ID, alpha, "")
		wantStatus(t, r, http.StatusOK)
		if r.memory(t).Valid {
			t.Errorf("GET of a deleted memory: %s", r)
		}
		r = e.do(t, "DELETE", "/v1/memories/"+m.ID, alpha, "")
		wantStatus(t, r, http.StatusOK)
		if r.memory(t).Version != 5 {
			t.Errorf("deleting twice made a new version: %s", r)
		}
		// once deleted, the same content may be stored again
		r = e.do(t, "POST", "/v1/memories", alpha, `{"content":"`+original+`","category":"preference"}`)
		wantStatus(t, r, http.StatusCreated)
		if r.memory(t).ID == m.ID {
			t.Errorf("a deleted memory was returned as a duplicate")
		}
		// rollback revives
		r = e.do(t, "POST", "/v1/memories/"+m.ID+"/rollback", alpha, `{"version":3}`)
		wantStatus(t, r, http.StatusOK)
		if rb := r.memory(t); !rb.Valid || rb.Version != 6 || rb.Content != "The user prefers light roast coffee" {
			t.Errorf("rollback of a deleted memory: %+v", rb)
		}
	})
}

// TestListPaging walks three pages with next_cursor, newest first, with
// and without a filter.
func TestListPaging(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		var want, tagged []string
		for i := range 8 {
			body := fmt.Sprintf(`{"content":"note number %d about paging"}`, i)
			if i%2 == 0 || i == 7 {
				body = fmt.Sprintf(`{"content":"note number %d about paging","tags":["even"]}`, i)
			}
			m := create(t, e, alpha, body)
			want = append([]string{m.ID}, want...)
			if i%2 == 0 || i == 7 {
				tagged = append([]string{m.ID}, tagged...)
			}
		}
		for _, tc := range []struct {
			name, query string
			want        []string
			pages       []int
		}{
			{"all", "limit=3", want, []int{3, 3, 2}},
			{"tag", "limit=2&tag=even", tagged, []int{2, 2, 1}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var got []string
				var sizes []int
				path := "/v1/memories?" + tc.query
				for range 10 {
					r := e.do(t, "GET", path, alpha, "")
					wantStatus(t, r, http.StatusOK)
					p := r.page(t)
					got = append(got, p.ids(t)...)
					sizes = append(sizes, len(p.Items))
					if p.NextCursor == "" {
						break
					}
					path = "/v1/memories?" + tc.query + "&cursor=" + url.QueryEscape(p.NextCursor)
				}
				if !slices.Equal(got, tc.want) || !slices.Equal(sizes, tc.pages) {
					t.Errorf("pages %v of %v, want pages %v of %v", sizes, got, tc.pages, tc.want)
				}
			})
		}
		// a cursor survives a change of page size (limit is not a filter)
		c := nextCursor(t, e, alpha, "/v1/memories?limit=3")
		r := e.do(t, "GET", "/v1/memories?limit=5&cursor="+url.QueryEscape(c), alpha, "")
		wantStatus(t, r, http.StatusOK)
		if ids := r.page(t).ids(t); !slices.Equal(ids, want[3:]) {
			t.Errorf("second page with limit 5 = %v, want %v", ids, want[3:])
		}
	})
}

// TestListFilters checks each list filter on a small fixed set.
func TestListFilters(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		coffee := create(t, e, alpha, `{"content":"The user prefers dark roast coffee","category":"preference","tags":["coffee"],"agent_id":"barista"}`)
		garden := create(t, e, alpha, `{"content":"Tomatoes need watering every morning","category":"life","tags":["garden"]}`)
		revise := create(t, e, alpha, `{"content":"The deadline might be Friday","category":"work"}`)
		wantStatus(t, e.do(t, "PATCH", "/v1/memories/"+revise.ID, alpha, `{"needs_revision":true}`), http.StatusOK)
		archived := create(t, e, alpha, `{"content":"Old garden plan","tags":["garden"]}`)
		wantStatus(t, e.do(t, "PATCH", "/v1/memories/"+archived.ID, alpha, `{"archived":true}`), http.StatusOK)
		keyed := e.do(t, "PUT", "/v1/keys/user/style", alpha, `{"content":"concise answers","source":"user"}`).memory(t)
		accented := e.do(t, "PUT", "/v1/keys/"+url.PathEscape("über")+"/"+url.PathEscape("größe"), alpha, `{"content":"size large","source":"user"}`).memory(t)
		if accented.Key != "/über/größe" {
			t.Fatalf("key = %q", accented.Key)
		}
		for _, tc := range []struct {
			name, query string
			want        []string
		}{
			{"category", "category=life", []string{accented.ID, keyed.ID, garden.ID}},
			{"tag", "tag=garden", []string{garden.ID}},
			{"tag with archived", "tag=garden&include_archived=true", []string{archived.ID, garden.ID}},
			{"query", "q=roast", []string{coffee.ID}},
			{"query two terms", "q=" + url.QueryEscape("watering tomatoes"), []string{garden.ID}},
			{"query no match", "q=espresso", nil},
			{"agent", "agent_id=barista", []string{coffee.ID}},
			{"needs revision", "needs_revision=true", []string{revise.ID}},
			{"key prefix", "key_prefix=/user", []string{keyed.ID}},
			{"key prefix is literal", "key_prefix=" + url.QueryEscape("/u%"), nil},
			{"key prefix whole non-ASCII key", "key_prefix=" + url.QueryEscape("/über/größe"), []string{accented.ID}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do(t, "GET", "/v1/memories?"+tc.query, alpha, "")
				wantStatus(t, r, http.StatusOK)
				if got := r.page(t).ids(t); !slices.Equal(got, tc.want) && len(got)+len(tc.want) > 0 {
					t.Errorf("GET ?%s = %v, want %v", tc.query, got, tc.want)
				}
			})
		}
		// the index follows updates and rollbacks
		r := e.do(t, "PATCH", "/v1/memories/"+garden.ID, alpha, `{"content":"Cucumbers need watering every evening"}`)
		wantStatus(t, r, http.StatusOK)
		search := func(q string) []string {
			t.Helper()
			r := e.do(t, "GET", "/v1/memories?q="+url.QueryEscape(q), alpha, "")
			wantStatus(t, r, http.StatusOK)
			return r.page(t).ids(t)
		}
		if got := search("tomatoes"); len(got) != 0 {
			t.Errorf("q=tomatoes after the update = %v, want none", got)
		}
		if got := search("cucumbers evening"); !slices.Equal(got, []string{garden.ID}) {
			t.Errorf("q=cucumbers after the update = %v, want %v", got, []string{garden.ID})
		}
		wantStatus(t, e.do(t, "POST", "/v1/memories/"+garden.ID+"/rollback", alpha, `{"version":1}`), http.StatusOK)
		if got := search("tomatoes"); !slices.Equal(got, []string{garden.ID}) {
			t.Errorf("q=tomatoes after the rollback = %v, want %v", got, []string{garden.ID})
		}
		if got := search("cucumbers"); len(got) != 0 {
			t.Errorf("q=cucumbers after the rollback = %v, want none", got)
		}
		wantStatus(t, e.do(t, "DELETE", "/v1/memories/"+garden.ID, alpha, ""), http.StatusOK)
		if got := search("tomatoes"); len(got) != 0 {
			t.Errorf("q=tomatoes after the delete = %v, want none", got)
		}

		// query text that is syntax in FTS5 or tsquery is only text
		for _, q := range []string{`"`, `'`, `\`, `*`, `a OR b`, `NEAR(a b)`, `content:coffee`, `coffee*`, `-coffee`,
			`a & b | !c`, `:*`, `%`, `_`, `()`, "\u00a0", `🙂`, `咖啡`, strings.Repeat("x ", 500)} {
			r := e.do(t, "GET", "/v1/memories?q="+url.QueryEscape(q), alpha, "")
			if r.Status != http.StatusOK {
				t.Errorf("q=%q: %s", q, r)
			}
		}
	})
}

// TestListKeyPrefixNonASCII: key_prefix matches keys by their leading
// characters whatever the script. Regression test: store/list.go compared
// substr(key, 1, len(prefix)) with the prefix, len counting bytes where
// substr counts characters, so a non-ASCII prefix matched nothing (fixed
// in c09f881).
func TestListKeyPrefixNonASCII(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		var ids []string
		for _, k := range []string{"/über/größe", "/用户/偏好/风格", "/café/menu"} {
			var path strings.Builder
			for seg := range strings.SplitSeq(k[1:], "/") {
				path.WriteString("/" + url.PathEscape(seg))
			}
			r := e.do(t, "PUT", "/v1/keys"+path.String(), alpha, `{"content":"value of `+k+`","source":"test"}`)
			wantStatus(t, r, http.StatusOK)
			ids = append(ids, r.memory(t).ID)
		}
		for _, tc := range []struct {
			prefix string
			want   []string
		}{
			{"/über", []string{ids[0]}},
			{"/über/", []string{ids[0]}},
			{"/用户/偏好", []string{ids[1]}},
			{"/用", []string{ids[1]}},
			{"/caf", []string{ids[2]}},
			{"/café", []string{ids[2]}},
		} {
			t.Run(tc.prefix, func(t *testing.T) {
				r := e.do(t, "GET", "/v1/memories?key_prefix="+url.QueryEscape(tc.prefix), alpha, "")
				wantStatus(t, r, http.StatusOK)
				if got := r.page(t).ids(t); !slices.Equal(got, tc.want) {
					t.Errorf("key_prefix=%s matched %v, want %v", tc.prefix, got, tc.want)
				}
			})
		}
	})
}

// TestKeys: set_memory over PUT /v1/keys, tombstones, {} content,
// expiry and provenance.
func TestKeys(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		const path = "/v1/keys/user/preference/style"

		r := e.do(t, "PUT", path, alpha, `{"content":"concise answers","source":"user"}`)
		wantStatus(t, r, http.StatusOK)
		wantETag(t, r, 1)
		m := r.memory(t)
		if m.Key != "/user/preference/style" || m.Content != "concise answers" || m.Category != "preference" || !m.Valid {
			t.Fatalf("PUT key = %+v", m)
		}
		r = e.do(t, "GET", path, alpha, "")
		wantStatus(t, r, http.StatusOK)
		wantETag(t, r, 1)
		if g := r.memory(t); g.ID != m.ID || g.Content != "concise answers" {
			t.Fatalf("GET key = %+v", g)
		}
		r = e.do(t, "PUT", path, alpha, `{"content":{"text":"bullet points","tags":["format"]},"source":"user"}`, "If-Match", `"1"`)
		wantStatus(t, r, http.StatusOK)
		if g := r.memory(t); g.ID != m.ID || g.Version != 2 || g.Content != "bullet points" || !slices.Equal(g.Tags, []string{"format"}) {
			t.Fatalf("second PUT = %+v", g)
		}
		r = e.do(t, "PUT", path, alpha, `{"content":null,"source":"user"}`)
		wantStatus(t, r, http.StatusOK)
		if g := r.memory(t); g.Valid || g.Version != 3 {
			t.Fatalf("PUT null = %+v", g)
		}
		wantError(t, e.do(t, "GET", path, alpha, ""), http.StatusNotFound, notFound)
		r = e.do(t, "PUT", path, alpha, `{"content":null,"source":"user"}`)
		wantStatus(t, r, http.StatusOK)
		if r.memory(t).Version != 3 {
			t.Errorf("tombstoning a tombstone made a new version: %s", r)
		}
		r = e.do(t, "PUT", path, alpha, `{"content":{},"source":"user"}`)
		wantStatus(t, r, http.StatusOK)
		if g := r.memory(t); !g.Valid || g.ID != m.ID || g.Version != 4 || string(g.Data) != "{}" {
			t.Fatalf("PUT {} = %+v", g)
		}
		r = e.do(t, "GET", path, alpha, "")
		wantStatus(t, r, http.StatusOK)
		if string(r.memory(t).Data) != "{}" {
			t.Errorf("GET after PUT {} = %s", r)
		}
		r = e.do(t, "DELETE", path, alpha, "", "If-Match", `"4"`)
		wantStatus(t, r, http.StatusOK)
		if r.memory(t).Valid {
			t.Errorf("DELETE key = %s", r)
		}
		wantError(t, e.do(t, "GET", path, alpha, ""), http.StatusNotFound, notFound)
		if h := history(t, e, alpha, m.ID); len(h) != 5 || h[0].Action != "create" || h[2].Action != "tombstone" || h[4].Action != "tombstone" {
			t.Errorf("key history = %+v", h)
		}

		// an expiry in the past hides the key at once
		r = e.do(t, "PUT", "/v1/keys/user/temp", alpha, `{"content":"gone soon","source":"user","expires_at":"2000-01-01T00:00:00Z"}`)
		wantStatus(t, r, http.StatusOK)
		expired := r.memory(t)
		wantError(t, e.do(t, "GET", "/v1/keys/user/temp", alpha, ""), http.StatusNotFound, notFound)
		if ids := e.do(t, "GET", "/v1/memories", alpha, "").page(t).ids(t); slices.Contains(ids, expired.ID) {
			t.Errorf("list shows an expired memory")
		}
		// an expiry in the future does not
		wantStatus(t, e.do(t, "PUT", "/v1/keys/user/later", alpha, `{"content":"later","source":"user","expires_at":"2999-01-01T00:00:00Z"}`), http.StatusOK)
		wantStatus(t, e.do(t, "GET", "/v1/keys/user/later", alpha, ""), http.StatusOK)

		// /kb/ with full provenance
		r = e.do(t, "PUT", "/v1/keys/kb/go/maps", alpha, `{"content":"Go maps are not safe for concurrent writes",
			"source":{"kind":"web","name":"go.dev","retrieved_at":"2025-01-02T03:04:05Z","locator":{"url":"https://go.dev/doc"}}}`)
		wantStatus(t, r, http.StatusOK)
		if r.memory(t).Category != "kb" {
			t.Errorf("kb key category: %s", r)
		}
		// Deleting it needs no retrieval trail: nothing was retrieved.
		if d := e.do(t, "DELETE", "/v1/keys/kb/go/maps", alpha, ""); d.Status != http.StatusOK || d.memory(t).Valid {
			t.Errorf("DELETE of a /kb/ key: %s", d)
		}
		wantStatus(t, e.do(t, "GET", "/v1/keys/kb/go/maps", alpha, ""), http.StatusNotFound)
		wantStatus(t, e.do(t, "PUT", "/v1/keys/kb/go/maps", alpha, `{"content":null,"source":"cleanup"}`), http.StatusOK)
		// POST with a key, then the key is taken
		r = e.do(t, "POST", "/v1/memories", alpha, `{"content":"posted","key":"/notes/posted","source":"user"}`)
		wantStatus(t, r, http.StatusCreated)
		if g := e.do(t, "GET", "/v1/keys/notes/posted", alpha, ""); g.Status != http.StatusOK || g.memory(t).ID != r.memory(t).ID {
			t.Errorf("GET of a posted key: %s", g)
		}
	})
}

// TestConcurrentWrites: writers racing on one memory. With the same
// If-Match exactly one wins and the others get 409; without it every
// write lands as its own version.
func TestConcurrentWrites(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		const n = 8
		race := func(f func(i int) *response) []int {
			var wg sync.WaitGroup
			statuses := make([]int, n)
			for i := range n {
				wg.Go(func() { statuses[i] = f(i).Status })
			}
			wg.Wait()
			return statuses
		}
		count := func(s []int, status int) int {
			c := 0
			for _, x := range s {
				if x == status {
					c++
				}
			}
			return c
		}

		m := create(t, e, alpha, `{"content":"contended memory"}`)
		s := race(func(i int) *response {
			return e.do(t, "PATCH", "/v1/memories/"+m.ID, alpha, fmt.Sprintf(`{"content":"writer %d"}`, i), "If-Match", `"1"`)
		})
		if count(s, 200) != 1 || count(s, 409) != n-1 {
			t.Errorf("same If-Match: statuses %v, want one 200 and %d 409", s, n-1)
		}
		if h := history(t, e, alpha, m.ID); len(h) != 2 {
			t.Errorf("history has %d events, want 2", len(h))
		}

		s = race(func(i int) *response {
			return e.do(t, "PATCH", "/v1/memories/"+m.ID, alpha, fmt.Sprintf(`{"summary":"summary %d"}`, i))
		})
		if count(s, 200) != n {
			t.Errorf("unconditional PATCHes: statuses %v, want all 200", s)
		}
		if g := e.do(t, "GET", "/v1/memories/"+m.ID, alpha, "").memory(t); g.Version != 2+n {
			t.Errorf("version %d after %d more writes, want %d", g.Version, n, 2+n)
		}

		s = race(func(i int) *response {
			return e.do(t, "PUT", "/v1/keys/race/key", alpha, fmt.Sprintf(`{"content":"value %d","source":"test"}`, i))
		})
		if count(s, 200) != n {
			t.Errorf("PUTs of one new key: statuses %v, want all 200", s)
		}
		r := e.do(t, "GET", "/v1/memories?key_prefix=/race/", alpha, "")
		if ids := r.page(t).ids(t); len(ids) != 1 {
			t.Fatalf("%d memories at one key", len(ids))
		}
		if g := e.do(t, "GET", "/v1/keys/race/key", alpha, "").memory(t); g.Version != n {
			t.Errorf("key at version %d after %d writes", g.Version, n)
		}

		s = race(func(i int) *response {
			return e.do(t, "POST", "/v1/memories", alpha, `{"content":"posted by everyone at once"}`)
		})
		if count(s, 201) != 1 || count(s, 200) != n-1 {
			t.Errorf("identical POSTs: statuses %v, want one 201 and the rest 200", s)
		}
	})
}

type failingPinger struct{}

func (failingPinger) Ping(context.Context) error { return errors.New("database is down") }

// TestHealth: /healthz needs no key and reports the store.
func TestHealth(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		r := e.do(t, "GET", "/healthz", "", "")
		wantStatus(t, r, http.StatusOK)
		if got := strings.TrimSpace(string(r.Body)); got != `{"status":"ok"}` {
			t.Errorf("healthz body = %s", got)
		}
	})
	s, err := server.New(server.Config{Health: failingPinger{}, Limits: server.Limits{MaxBodyBytes: 1 << 20, MaxJSONDepth: 32, Keys: configs.Default().Limits.KeyLimits()}})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if body := strings.TrimSpace(rec.Body.String()); rec.Code != http.StatusServiceUnavailable || body != `{"status":"unavailable"}` {
		t.Errorf("healthz with a failing store = %d %s, want 503 {\"status\":\"unavailable\"}", rec.Code, body)
	}
}

// TestMounts: the console and the MCP server are handlers of their own
// packages that the server routes to; unset, their paths are 404.
func TestMounts(t *testing.T) {
	lim := server.Limits{MaxBodyBytes: 1 << 20, MaxJSONDepth: 32, Keys: configs.Default().Limits.KeyLimits()}
	echo := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s %s %s", name, r.Method, r.URL.Path)
		})
	}
	mounted, err := server.New(server.Config{Limits: lim, Console: echo("console"), MCP: echo("mcp")})
	if err != nil {
		t.Fatal(err)
	}
	bare, err := server.New(server.Config{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ method, path, want string }{
		{"GET", "/console/", "console GET /console/"},
		{"GET", "/console/memories/mem_x", "console GET /console/memories/mem_x"},
		{"POST", "/console/login", "console POST /console/login"},
		{"POST", "/mcp", "mcp POST /mcp"},
		{"GET", "/mcp", "mcp GET /mcp"},
	} {
		rec := httptest.NewRecorder()
		mounted.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != http.StatusOK || rec.Body.String() != tt.want {
			t.Errorf("%s %s = %d %q, want %q", tt.method, tt.path, rec.Code, rec.Body.String(), tt.want)
		}
		rec = httptest.NewRecorder()
		bare.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != http.StatusNotFound {
			t.Errorf("unmounted %s %s = %d, want 404", tt.method, tt.path, rec.Code)
		}
	}
}

var metricsLine = regexp.MustCompile(`^engram_http_requests_total\{code="(\d+)",method="([^"]*)",route="([^"]*)"\} (\d+)$`)

// TestMetrics: request counts are labelled by route pattern, never by a
// raw path, id, key or tenant; memory counts are by state.
func TestMetrics(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		m := create(t, e, alpha, `{"content":"metric memory one"}`)
		create(t, e, alpha, `{"content":"metric memory two"}`)
		gone := create(t, e, alpha, `{"content":"metric memory three"}`)
		wantStatus(t, e.do(t, "DELETE", "/v1/memories/"+gone.ID, alpha, ""), http.StatusOK)
		wantStatus(t, e.do(t, "GET", "/v1/memories/"+m.ID, alpha, ""), http.StatusOK)
		wantStatus(t, e.do(t, "PUT", "/v1/keys/secretproject/plan", alpha, `{"content":"x","source":"t"}`), http.StatusOK)
		wantStatus(t, e.do(t, "GET", "/v1/keys/secretproject/plan", alpha, ""), http.StatusOK)
		e.do(t, "GET", "/v1/memories/mem_unknownid", alpha, "")
		e.do(t, "GET", "/nothing/here/"+m.ID, "", "")
		e.do(t, "PUT", "/v1/memories", alpha, "")

		r := e.do(t, "GET", "/metrics", "", "")
		wantStatus(t, r, http.StatusOK)
		body := string(r.Body)
		routes := map[string]bool{}
		for line := range strings.SplitSeq(body, "\n") {
			if !strings.HasPrefix(line, "engram_http_requests_total{") {
				continue
			}
			sm := metricsLine.FindStringSubmatch(line)
			if sm == nil {
				t.Errorf("unexpected metric line %q", line)
				continue
			}
			routes[sm[2]+" "+sm[3]+" "+sm[1]] = true
		}
		for _, want := range []string{
			"GET /v1/memories/:id 200", "POST /v1/memories 201", "DELETE /v1/memories/:id 200",
			"PUT /v1/keys/*key 200", "GET /v1/keys/*key 200", "GET /v1/memories/:id 404",
			"GET unmatched 404", "PUT unmatched 405",
		} {
			if !routes[want] {
				t.Errorf("no request count for %q; have %v", want, routes)
			}
		}
		for _, secret := range []string{m.ID, gone.ID, "mem_unknownid", "secretproject", "alpha", alpha, "/nothing"} {
			if strings.Contains(body, secret) {
				t.Errorf("/metrics reveals %q", secret)
			}
		}
		for _, want := range []string{`engram_memories{state="active"} 3`, `engram_memories{state="tombstoned"} 1`, `engram_memories{state="archived"} 0`} {
			if !strings.Contains(body, want+"\n") {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})
}

// TestMetricsMethodLabelBounded: the method label of
// engram_http_requests_total takes only a fixed set of values, whatever
// methods clients send, so that no client can grow /metrics without bound
// (the class of CVE-2022-21698 in promhttp). Regression test: the raw
// method was the label, so every made-up method sent to any path, even
// unauthenticated, added series for the life of the process (fixed in
// c09f881).
func TestMetricsMethodLabelBounded(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		for i := range 20 {
			r := e.raw(t, fmt.Sprintf("M%dX", i), "/nope", "", "")
			wantError(t, r, http.StatusNotFound, notFound)
		}
		known := map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true,
			"OPTIONS": true, "CONNECT": true, "TRACE": true, "OTHER": true, "other": true, "unknown": true}
		methods := map[string]bool{}
		for line := range strings.SplitSeq(string(e.do(t, "GET", "/metrics", "", "").Body), "\n") {
			if sm := metricsLine.FindStringSubmatch(line); sm != nil && !known[sm[2]] {
				methods[sm[2]] = true
			}
		}
		if len(methods) > 0 {
			t.Errorf("/metrics has a series per made-up method: %d methods such as %v", len(methods), slices.Sorted(maps.Keys(methods))[:3])
		}
	})
}

// TestRouting: unknown paths are 404 and wrong methods 405, both in the
// error shape and without authentication.
func TestRouting(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		for _, tc := range []struct {
			method, path string
			status       int
			code         string
		}{
			{"GET", "/nope", 404, notFound},
			{"GET", "/v2/memories", 404, notFound},
			{"GET", "/v1/memories/x/y/z", 404, notFound},
			{"GET", "/v1/unknown", 404, notFound},
			{"POST", "/v1/no-such-endpoint", 404, notFound},
			{"PUT", "/v1/memories", 405, "method_not_allowed"},
			{"DELETE", "/v1/memories", 405, "method_not_allowed"},
			{"POST", "/v1/memories/mem_x", 405, "method_not_allowed"},
			{"PUT", "/v1/memories/mem_x", 405, "method_not_allowed"},
			{"GET", "/v1/memories/mem_x/rollback", 405, "method_not_allowed"},
			{"DELETE", "/v1/memories/mem_x/history", 405, "method_not_allowed"},
			{"POST", "/v1/keys/a", 405, "method_not_allowed"},
			{"PATCH", "/v1/keys/a", 405, "method_not_allowed"},
			{"POST", "/healthz", 405, "method_not_allowed"},
			{"DELETE", "/metrics", 405, "method_not_allowed"},
		} {
			t.Run(tc.method+" "+tc.path, func(t *testing.T) {
				for _, key := range []string{"", alpha} {
					wantError(t, e.do(t, tc.method, tc.path, key, ""), tc.status, tc.code)
				}
			})
		}
	})
}

var generatedID = regexp.MustCompile(`^[0-9a-f]{16}$`)

// TestRequestID: a plain client id is echoed; anything else is replaced
// by a generated one, on every kind of response.
func TestRequestID(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		for _, tc := range []struct {
			name, id string
			keep     bool
		}{
			{"plain", "req-123_abc.DEF", true},
			{"uuid", "0f8fad5b-d9cb-469f-a165-70867728950e", true},
			{"64 chars", strings.Repeat("a", 64), true},
			{"65 chars", strings.Repeat("a", 65), false},
			{"none", "", false},
			{"space", "a b", false},
			{"newline", "a\nb", false},
			{"header injection", "a\r\nSet-Cookie: x=1", false},
			{"tab", "a\tb", false},
			{"markup", "<script>alert(1)</script>", false},
			{"non-ASCII", "ünïcode", false},
			{"quote", `a"b`, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				for _, req := range []struct{ method, path, key string }{
					{"GET", "/healthz", ""},
					{"GET", "/v1/memories", alpha},
					{"GET", "/v1/memories", ""},
					{"GET", "/nope", ""},
				} {
					var headers []string
					if tc.id != "" {
						headers = []string{"X-Request-ID", tc.id}
					}
					got := e.do(t, req.method, req.path, req.key, "", headers...).Header.Values("X-Request-ID")
					if len(got) != 1 {
						t.Fatalf("%s %s: X-Request-ID = %q", req.method, req.path, got)
					}
					if tc.keep && got[0] != tc.id {
						t.Errorf("%s %s: X-Request-ID = %q, want %q kept", req.method, req.path, got[0], tc.id)
					}
					if !tc.keep && !generatedID.MatchString(got[0]) {
						t.Errorf("%s %s: X-Request-ID = %q, want a generated id", req.method, req.path, got[0])
					}
				}
			})
		}
		a := e.do(t, "GET", "/healthz", "", "").Header.Get("X-Request-ID")
		b := e.do(t, "GET", "/healthz", "", "").Header.Get("X-Request-ID")
		if a == b {
			t.Errorf("two requests got the same generated id %q", a)
		}
	})
}

// TestLongRunWithoutWhiteSpace: content at the 32,768-character limit
// without white space is stored in well under a second. Token counting
// runs inside the write transaction (store/memory.go insert → fromMemory),
// so on SQLite every write of every tenant waits for it. Regression test:
// tiktoken-go's BPE is quadratic in the length of such a run; one 96 KiB
// request of CJK text took 7-8 s (20 s under -race) and stalled all writes
// meanwhile. The bound is generous so that only that regression trips it.
func TestLongRunWithoutWhiteSpace(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		for _, unit := range []string{"a", "é", "中", "😀"} {
			t.Run(unit, func(t *testing.T) {
				start := time.Now()
				r := e.do(t, "POST", "/v1/memories", alpha, mustJSON(map[string]string{"content": strings.Repeat(unit, 32768)}))
				wantStatus(t, r, http.StatusCreated)
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("storing 32,768 × %q took %v", unit, d)
				}
			})
		}
	})
}

// BenchmarkCreateMaxContent: POST /v1/memories with content at the
// 32,768-character limit, with and without white space. Run with
//
//	go test -tags sqlite_fts5 -run '^$' -bench CreateMaxContent ./server/
func BenchmarkCreateMaxContent(b *testing.B) {
	for _, tc := range []struct{ name, unit string }{{"words", "word "}, {"ascii-run", "a"}, {"cjk-run", "中"}} {
		b.Run(tc.name, func(b *testing.B) {
			e := newEnv(b, "sqlite")
			alpha, _ := e.tenant(b, "alpha")
			pad := strings.Repeat(tc.unit, 32760/len([]rune(tc.unit)))
			i := 0
			for b.Loop() {
				i++
				r := e.do(b, "POST", "/v1/memories", alpha, mustJSON(map[string]string{"content": fmt.Sprint(i) + pad}))
				if r.Status != http.StatusCreated {
					b.Fatal(r)
				}
			}
		})
	}
}
