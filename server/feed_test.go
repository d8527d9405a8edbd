package server_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestTwoServersRouteAlike: two engram servers on one database route a
// query the same way right after a write to either — the routing model is
// learned from the store's change feed, not from the writes one process
// happens to serve. (Before the feed, 25 emotion memories written to one
// server left the other routing uniformly for as long as it ran.)
func TestTwoServersRouteAlike(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		one := newRecallEnvOn(t, storetest.OpenWith(t, o))
		two := newRecallEnvOn(t, storetest.OpenWith(t, o))
		key, _ := one.tenant(t, "acme")
		const query = "the Zorblax thing again"
		route := func(e *env) engram.Route {
			t.Helper()
			var rt engram.Route
			r := e.do(t, "POST", "/v1/route", key, `{"query":"`+query+`"}`)
			wantStatus(t, r, http.StatusOK)
			mustDecode(t, r, &rt)
			return rt
		}
		// Both servers have loaded the tenant before the writes.
		if a, b := route(one), route(two); !reflect.DeepEqual(a, b) {
			t.Fatalf("empty tenant: routes differ: %+v vs %+v", a, b)
		}
		for i := range 25 {
			create(t, one, key, fmt.Sprintf(`{"content":"Zorblax day %d: the Zorblax thing left me shaking","category":"emotion"}`, i))
		}
		a, b := route(one), route(two)
		if a.Domains[0].Name != "emotion" || !reflect.DeepEqual(a, b) {
			t.Fatalf("after 25 writes to server one:\n one %+v\n two %+v", a.Domains, b.Domains)
		}
		// And the other way round: the memories are moved to work on
		// server two, then deleted there.
		r := one.do(t, "GET", "/v1/memories?category=emotion&limit=100", key, "")
		wantStatus(t, r, http.StatusOK)
		var page struct {
			Items []engram.Memory `json:"items"`
		}
		mustDecode(t, r, &page)
		if len(page.Items) != 25 {
			t.Fatalf("listed %d memories, want 25", len(page.Items))
		}
		for _, m := range page.Items {
			wantStatus(t, two.do(t, "PATCH", "/v1/memories/"+m.ID, key, `{"category":"work"}`), http.StatusOK)
		}
		a, b = route(one), route(two)
		if a.Domains[0].Name != "work" || !reflect.DeepEqual(a, b) {
			t.Fatalf("after 25 moves on server two:\n one %+v\n two %+v", a.Domains, b.Domains)
		}
		for _, m := range page.Items {
			wantStatus(t, two.do(t, "DELETE", "/v1/memories/"+m.ID, key, ""), http.StatusOK)
		}
		a, b = route(one), route(two)
		if !reflect.DeepEqual(a, b) || a.Domains[0].Score > 0.5 {
			t.Fatalf("after deleting them on server two:\n one %+v\n two %+v", a.Domains, b.Domains)
		}
		// A third server started now loads the same model from the store.
		three := newRecallEnvOn(t, storetest.OpenWith(t, o))
		if c := route(three); !reflect.DeepEqual(a, c) {
			t.Fatalf("a fresh server routes differently:\n one   %+v\n three %+v", a.Domains, c.Domains)
		}
	})
}

// TestChangeFeedOrder: concurrent writers to one tenant get gapless feed
// sequence numbers, and a follower reading while they write sees them in
// order with none skipped.
func TestChangeFeedOrder(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		db := storetest.OpenWith(t, o)
		other := storetest.OpenWith(t, o)
		ctx := storetest.Tenant(t, db, "acme")
		quiet := storetest.Tenant(t, db, "quiet")
		if _, err := db.CreateMemory(quiet, &engram.Memory{Content: "another tenant's memory"}); err != nil {
			t.Fatal(err)
		}
		const writers, each = 4, 15
		var wg sync.WaitGroup
		done := make(chan struct{})
		var followErr error
		var followed []int64
		go func() {
			defer close(done)
			var last int64
			for {
				changes, err := other.Changes(ctx, last, 7)
				if err != nil {
					followErr = err
					return
				}
				for _, c := range changes {
					followed = append(followed, c.Seq)
					last = c.Seq
				}
				if last >= writers*each*2 {
					return
				}
			}
		}()
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					m, err := db.CreateMemory(ctx, &engram.Memory{Content: fmt.Sprintf("writer %d note %d", w, i)})
					if err != nil {
						t.Error(err)
						return
					}
					tags := []string{"edited"}
					if _, err := db.UpdateMemory(ctx, m.Memory.ID, engram.MemoryUpdate{Tags: &tags}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		<-done
		if followErr != nil {
			t.Fatal(followErr)
		}
		for i, seq := range followed {
			if seq != int64(i+1) {
				t.Fatalf("follower saw %v…: want 1, 2, 3, … with no gap", followed[:i+1])
			}
		}
		if len(followed) != writers*each*2 {
			t.Fatalf("follower saw %d changes, want %d", len(followed), writers*each*2)
		}
		all, err := db.Changes(ctx, 0, 1000)
		if err != nil || len(all) != writers*each*2 {
			t.Fatalf("%d changes (%v)", len(all), err)
		}
		for _, c := range all {
			ok := c.Action == engram.ActionCreate && c.Before == nil && c.After != nil && c.After.Version == 1 ||
				c.Action == engram.ActionUpdate && c.Before != nil && c.After != nil && c.After.Version == c.Before.Version+1
			if !ok || c.MemoryID != c.After.ID {
				t.Fatalf("change %d: %s of %s, before %v, after %v", c.Seq, c.Action, c.MemoryID, c.Before, c.After)
			}
		}
		n := 0
		head, err := db.EachLive(ctx, func(*engram.Memory) error { n++; return nil })
		if err != nil || head != writers*each*2 || n != writers*each {
			t.Errorf("snapshot: head %d, %d live memories (%v)", head, n, err)
		}
		q, err := db.Changes(quiet, 0, 10)
		if err != nil || len(q) != 1 || q[0].Seq != 1 {
			t.Errorf("the other tenant's feed: %+v (%v)", q, err)
		}
		if _, err := db.Changes(context.Background(), 0, 10); engram.ErrorCode(err) != engram.EUNAUTHORIZED {
			t.Errorf("no tenant: %v", err)
		}
	})
}
