package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestSleep: one sleep merges near duplicates (keeping both provenances
// and the merged memory's history), archives what decayed and what
// expired, folds old feedback events so that history and rollback still
// work, and re-reflects; a second sleep right after changes nothing.
func TestSleep(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e, key, ctx := sleepEnv(t, engine)
		t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
		e.clock.set(t0)
		keep := create(t, e.env, key, `{"content":"User drinks black coffee every morning at home","category":"preference","source":"chat-1","tags":["coffee"]}`)
		e.clock.set(t0.Add(time.Minute)) // the older of two near duplicates is kept
		drop := create(t, e.env, key, `{"content":"User drinks black coffee, every morning, at home!","category":"preference","source":"chat-2","tags":["mornings"]}`)
		faded := create(t, e.env, key, `{"content":"Parking spot 42 this week","category":"life","priority":"P3"}`)
		steady := create(t, e.env, key, `{"content":"Team offsite in Lisbon","category":"work","priority":"P2"}`)
		identity := create(t, e.env, key, `{"content":"The user's name is Ada","category":"life","priority":"P0"}`)
		wantStatus(t, e.do(t, "PUT", "/v1/keys/user/locker", key, `{"content":{"text":"Locker code 1234","priority":"P3"},"source":"chat"}`), http.StatusOK)
		soon := create(t, e.env, key, `{"content":"Gate code valid today only","category":"life","expires_at":"2026-01-02T00:00:00Z"}`)
		for _, c := range []string{"Dentist on Tuesday", "Plumber comes Friday", "Car service in March"} {
			create(t, e.env, key, `{"content":"`+c+`","category":"life","priority":"P1"}`)
		}
		for _, rater := range []string{"a", "b", "c", "d", "e"} {
			wantStatus(t, e.do(t, "POST", "/v1/feedback", key, `{"memory_id":"`+steady.ID+`","thumb":"up","rater":"`+rater+`"}`), http.StatusCreated)
		}

		e.clock.set(t0.AddDate(0, 0, 70))
		res, err := e.sleep.Sleep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.Merged != 1 || res.Archived != 1 || res.Expired != 1 || res.EventsFolded != 4 || res.Conflicts != 0 ||
			res.EventBytesAfter >= res.EventBytesBefore || len(res.Reflect.Written) == 0 {
			t.Fatalf("first sleep: %+v, reflect %+v", res, res.Reflect)
		}
		kept := getMemory(t, e.env, key, keep.ID)
		var src struct {
			Kind   string          `json:"kind"`
			Source json.RawMessage `json:"source"`
			Merged []struct {
				ID     string          `json:"id"`
				Source json.RawMessage `json:"source"`
			} `json:"merged"`
		}
		if err := json.Unmarshal(kept.Source, &src); err != nil || src.Kind != "merge" || string(src.Source) != `"chat-1"` ||
			len(src.Merged) != 1 || src.Merged[0].ID != drop.ID || string(src.Merged[0].Source) != `"chat-2"` || len(kept.Tags) != 2 {
			t.Fatalf("kept memory: source %s, tags %v (%v)", kept.Source, kept.Tags, err)
		}
		if m := getMemory(t, e.env, key, drop.ID); m.Valid {
			t.Fatal("the merged memory is still live")
		}
		wantStatus(t, e.do(t, "GET", "/v1/memories/"+drop.ID+"/history", key, ""), http.StatusOK)
		for id, archived := range map[string]bool{faded.ID: true, soon.ID: true, steady.ID: false, identity.ID: false} {
			if m := getMemory(t, e.env, key, id); m.Archived != archived {
				t.Errorf("%s (%s): archived %v, want %v", id, m.Content, m.Archived, archived)
			}
		}
		if r := e.do(t, "GET", "/v1/keys/user/locker", key, ""); r.Status != http.StatusOK {
			t.Errorf("a keyed memory was archived by age: %s", r)
		}
		// Five feedback events (versions 2–6) folded to the last; rollback
		// still reaches every kept version.
		r := e.do(t, "GET", "/v1/memories/"+steady.ID+"/history", key, "")
		var history struct {
			Items []struct {
				Version int64  `json:"version"`
				Action  string `json:"action"`
			} `json:"items"`
		}
		mustDecode(t, r, &history)
		if len(history.Items) != 2 || history.Items[0].Version != 1 || history.Items[1].Version != 6 {
			t.Fatalf("history after folding: %+v", history.Items)
		}
		wantStatus(t, e.do(t, "POST", "/v1/memories/"+steady.ID+"/rollback", key, `{"version":1}`), http.StatusOK)
		wantStatus(t, e.do(t, "POST", "/v1/memories/"+steady.ID+"/rollback", key, `{"version":6}`), http.StatusOK)

		again, err := e.sleep.Sleep(ctx)
		if err != nil || again.Changed() {
			t.Fatalf("second sleep changed something: %+v %v", again, err)
		}
	})
}

// TestSleepMergesWithinOwner: near duplicates are merged only between
// memories of one end user and one security level: two users saying the
// same thing keep their own memories, and a confidential memory is never
// folded into (or deleted in favour of) a memory of another level, which
// would move its tags and provenance there.
func TestSleepMergesWithinOwner(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e, key, ctx := sleepEnv(t, engine)
		mk := func(text, rest string) string {
			return create(t, e.env, key, `{"content":"`+text+`","category":"preference",`+rest+`}`).ID
		}
		ann := mk("User drinks black coffee every morning at home", `"user_id":"ann","tags":["ann"]`)
		bob := mk("User drinks black coffee every morning at home!", `"user_id":"bob","tags":["bob"]`)
		shared := mk("User drinks black coffee, every morning at home", `"tags":["desk"]`)
		secret := mk("User drinks black coffee every morning, at home", `"security_level":"confidential","source":"hr-file","tags":["payroll"]`)
		again := mk("User drinks black coffee, every morning, at home!", `"user_id":"ann","tags":["kitchen"]`)
		res, err := e.sleep.Sleep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.Merged != 1 {
			t.Errorf("merged %d, want only ann's two memories", res.Merged)
		}
		for id, tags := range map[string]int{ann: 2, bob: 1, shared: 1, secret: 1} {
			if got := getMemory(t, e.env, key, id); !got.Valid || len(got.Tags) != tags {
				t.Errorf("%s (%s): valid %v, tags %v, want %d", id, got.Content, got.Valid, got.Tags, tags)
			}
		}
		if got := getMemory(t, e.env, key, again); got.Valid {
			t.Error("ann's second memory was not merged into her first")
		}
	})
}

// sleepEnv is a feedback env with tenant acme, its key, and the context a
// sleep of acme runs in.
func sleepEnv(t *testing.T, engine string) (*fbEnv, string, context.Context) {
	t.Helper()
	e := newFeedbackEnv(t, engine)
	key, _ := e.tenant(t, "acme")
	tenant, err := e.db.FindTenant(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return e, key, engram.NewContextWithActor(engram.NewContextWithTenant(context.Background(), tenant.ID), engram.Actor{KeyID: "sleep"})
}
