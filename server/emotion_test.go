package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/engram-memory/engram/store/storetest"
)

// emotionOf reads the emotion of the memory a response holds.
func emotionOf(t *testing.T, r *response) float64 {
	t.Helper()
	type memory struct {
		Emotion *float64 `json:"emotion"`
	}
	var m struct {
		memory
		Memory *memory `json:"memory"`
	}
	err := json.Unmarshal(r.Body, &m)
	if m.Memory != nil {
		m.memory = *m.Memory
	}
	if err != nil || m.Emotion == nil {
		t.Fatalf("no emotion in %s", r)
	}
	return *m.Emotion
}

// TestEmotion: a write's emotion is stored as given, else estimated from
// the text (English and Chinese); a PATCH and a key write set it; a bad
// one is a 400 that writes nothing; an equally relevant memory said with
// feeling ranks first and shows its factor in the breakdown; an export
// and import keep it.
func TestEmotion(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newTransferEnv(t, engine)
		key := secretKey(t, e, "alpha")
		given := e.do(t, "POST", "/v1/memories", key, `{"content":"The lake house trip with grandma","category":"life","emotion":0.9}`)
		wantStatus(t, given, http.StatusCreated)
		if got := emotionOf(t, given); got != 0.9 {
			t.Fatalf("given emotion: %v", got)
		}
		for body, want := range map[string]bool{
			`{"content":"I absolutely hate flying, it terrifies me!","category":"life"}`: true,
			`{"content":"我太害怕坐飞机了！","category":"life"}`:                                  true,
			`{"content":"The invoice is filed under project Kestrel","category":"work"}`: false,
		} {
			r := e.do(t, "POST", "/v1/memories", key, body)
			wantStatus(t, r, http.StatusCreated)
			if got := emotionOf(t, r); (got > 0.3) != want || (!want && got != 0) {
				t.Errorf("%s: estimated emotion %v", body, got)
			}
		}

		before := e.snapshot(t, key)
		for _, body := range []string{
			`{"content":"x","category":"life","emotion":1.5}`,
			`{"content":"x","category":"life","emotion":-0.1}`,
			`{"content":"x","category":"life","emotion":"high"}`,
		} {
			wantError(t, e.do(t, "POST", "/v1/memories", key, body), http.StatusBadRequest, "invalid")
		}
		wantError(t, e.do(t, "PUT", "/v1/keys/user/mood", key, `{"content":"calm","source":"chat","emotion":2}`), http.StatusBadRequest, "invalid")
		id := given.memory(t).ID
		wantError(t, e.do(t, "PATCH", "/v1/memories/"+id, key, `{"emotion":7}`), http.StatusBadRequest, "invalid")
		if after := e.snapshot(t, key); after != before {
			t.Fatal("a refused emotion changed the store")
		}
		r := e.do(t, "PATCH", "/v1/memories/"+id, key, `{"emotion":0.4}`)
		wantStatus(t, r, http.StatusOK)
		if got := emotionOf(t, r); got != 0.4 {
			t.Fatalf("patched emotion: %v", got)
		}
		r = e.do(t, "PUT", "/v1/keys/user/mood", key, `{"content":"calm","source":"chat","emotion":0.2}`)
		wantStatus(t, r, http.StatusOK)
		if got := emotionOf(t, r); got != 0.2 {
			t.Fatalf("key emotion: %v", got)
		}

		// The same words, once shared and neutral, once the user's and
		// felt: equally relevant, the felt one first.
		plain := create(t, e, key, `{"content":"Weekend sailing on the estuary","category":"life","emotion":0}`)
		felt := create(t, e, key, `{"content":"Weekend sailing on the estuary","category":"life","emotion":1,"user_id":"ann"}`)
		rec := postRecall(t, e, key, map[string]any{"query": "weekend sailing estuary", "token_budget": 300, "user_id": "ann", "fill": true})
		if len(rec.Items) < 2 || rec.Items[0].ID != felt.ID || rec.Items[1].ID != plain.ID {
			t.Fatalf("the felt memory must come first: %+v", rec.Items)
		}
		if b := rec.Items[0].Breakdown; b.Emotion != 1.05 || rec.Items[1].Breakdown.Emotion != 1 {
			t.Fatalf("breakdown emotion: %+v / %+v", b, rec.Items[1].Breakdown)
		}

		export := e.do(t, "GET", "/v1/export", key, "")
		wantStatus(t, export, http.StatusOK)
		dst := secretKey(t, e, "beta")
		wantStatus(t, importReq(t, e, dst, "", string(export.Body)), http.StatusOK)
		found := false
		for _, it := range e.do(t, "GET", "/v1/memories?limit=100", dst, "").page(t).Items {
			s := string(it)
			found = found || strings.Contains(s, "lake house") && strings.Contains(s, `"emotion":0.4`)
		}
		if !found {
			t.Fatal("the import lost the emotion")
		}
	})
}
