package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

type eventsPage struct {
	eventsAnswer
	NextCursor string `json:"next_cursor"`
}

// TestSessionEventsPaged: GET .../events answers one page (limit,
// next_cursor) and following the cursors reads the whole session once;
// bad limits and cursors are 400.
func TestSessionEventsPaged(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSessionEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		var evs []string
		for i := range 7 {
			evs = append(evs, fmt.Sprintf(`{"type":"decision","content":"d%d"}`, i+1))
		}
		postEvents(t, e, key, "s", `{"events":[`+strings.Join(evs, ",")+`]}`)
		var got []string
		path, pages := "/v1/sessions/s/events?limit=3", 0
		for {
			r := e.do(t, "GET", path, key, "")
			wantStatus(t, r, http.StatusOK)
			var p eventsPage
			mustDecode(t, r, &p)
			pages++
			if len(p.Events) > 3 || p.Session.Events != 7 {
				t.Fatalf("page %d: %s", pages, r)
			}
			for _, ev := range p.Events {
				got = append(got, ev.Content)
			}
			if p.NextCursor == "" {
				break
			}
			path = "/v1/sessions/s/events?limit=3&cursor=" + p.NextCursor
		}
		if pages != 3 || strings.Join(got, ",") != "d1,d2,d3,d4,d5,d6,d7" {
			t.Errorf("%d pages: %v", pages, got)
		}
		for _, q := range []string{"limit=0", "limit=x", "limit=501", "cursor=nope", "order=desc"} {
			wantError(t, e.do(t, "GET", "/v1/sessions/s/events?"+q, key, ""), 400, engram.EINVALID)
		}
	})
}

// TestSessionMaxEventsREST: a post past sessions.max_events is a 413
// naming the key and stores none of its events.
func TestSessionMaxEventsREST(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		o.MaxSessionEvents = 3
		e := newSessionEnvOn(t, storetest.OpenWith(t, o))
		key, _ := e.tenant(t, "alpha")
		postEvents(t, e, key, "s", `{"events":[{"type":"decision","content":"a"},{"type":"decision","content":"b"}]}`)
		r := e.do(t, "POST", "/v1/sessions/s/events", key, `{"events":[{"type":"decision","content":"c"},{"type":"decision","content":"d"}]}`)
		wantError(t, r, 413, engram.ETOOLARGE, "sessions.max_events", "3")
		postEvents(t, e, key, "s", `{"type":"decision","content":"c"}`)
		wantError(t, e.do(t, "POST", "/v1/sessions/s/events", key, `{"type":"decision","content":"d"}`), 413, engram.ETOOLARGE)
		r = e.do(t, "GET", "/v1/sessions/s/events", key, "")
		var p eventsPage
		mustDecode(t, r, &p)
		if p.Session.Events != 3 || len(p.Events) != 3 {
			t.Errorf("session after refusals: %s", r)
		}
	})
}

// TestQuotaDoors: past the memories quota every REST door that writes a
// memory (single, batch, key PUT, a session message's episode) answers
// 403 quota_exceeded naming the quota and its limit and writes nothing
// (the message's event included); the refusals show in /metrics.
func TestQuotaDoors(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		o.Quotas = store.Quotas{Memories: 2, Sessions: 1}
		e := newSessionEnvOn(t, storetest.OpenWith(t, o))
		key, _ := e.tenant(t, "alpha")
		wantStatus(t, e.do(t, "POST", "/v1/memories", key, `{"content":"one"}`), http.StatusCreated)
		postEvents(t, e, key, "s", `{"type":"message","role":"user","content":"two"}`)
		before := e.snapshot(t, key)
		for _, tc := range [][3]string{
			{"POST", "/v1/memories", `{"content":"three"}`},
			{"POST", "/v1/memories/batch", `{"memories":[{"content":"three"},{"content":"four"}]}`},
			{"PUT", "/v1/keys/user/name", `{"content":"Ada","source":"chat"}`},
			{"POST", "/v1/sessions/s/events", `{"type":"message","role":"user","content":"three"}`},
		} {
			wantError(t, e.do(t, tc[0], tc[1], key, tc[2]), 403, engram.EQUOTA, "quotas.max_memories", "2")
		}
		wantError(t, e.do(t, "POST", "/v1/sessions/other/events", key, `{"type":"decision","content":"d"}`),
			403, engram.EQUOTA, "quotas.max_sessions", "1")
		wantError(t, e.do(t, "PUT", "/v1/sessions/other/state", key, `{"state":{}}`), 403, engram.EQUOTA, "quotas.max_sessions")
		sameSnapshot(t, "memories after refusals", before, e.snapshot(t, key))
		r := e.do(t, "GET", "/v1/sessions/s/events", key, "")
		var p eventsPage
		mustDecode(t, r, &p)
		if p.Session.Events != 1 {
			t.Errorf("a refused message left its event: %s", r)
		}
		if r := e.do(t, "POST", "/v1/sessions/s/events", key, `{"type":"decision","content":"no memory"}`); r.Status != http.StatusCreated {
			t.Errorf("an event that writes no memory: %s", r)
		}
		metrics := string(e.do(t, "GET", "/metrics", "", "").Body)
		for _, want := range []string{`engram_quota_refusals_total{quota="memories"} 4`, `engram_quota_refusals_total{quota="sessions"} 2`,
			`engram_quota_refusals_total{quota="bytes"} 0`} {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})
}
