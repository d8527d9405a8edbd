package learning_test

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/index/indextest"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/router"
	"github.com/engram-memory/engram/store/storetest"
)

// embedConcepts maps words of both languages to shared concepts, so the
// fake model embeds "咖啡" and "coffee" alike, as a multilingual model would.
var embedConcepts = map[string]string{"咖啡": "coffee", "coffee": "coffee", "espresso": "coffee", "牙医": "dentist", "dentist": "dentist"}

// embedServer speaks the OpenAI embeddings wire format: POST /embeddings
// {"model","input":[...],"encoding_format"} → {"object":"list","data":
// [{"object":"embedding","index":i,"embedding":[...]}],"model","usage"}.
// Vectors are bags of hashed concepts. delay slows every answer.
func embedServer(t *testing.T, delay time.Duration, calls *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer sk-test" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)
			return
		}
		var req struct {
			Model          string   `json:"model"`
			Input          []string `json:"input"`
			EncodingFormat string   `json:"encoding_format"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" || req.EncodingFormat != "float" {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := struct {
			Object string         `json:"object"`
			Data   []item         `json:"data"`
			Model  string         `json:"model"`
			Usage  map[string]int `json:"usage"`
		}{Object: "list", Model: req.Model, Usage: map[string]int{"prompt_tokens": 1, "total_tokens": 1}}
		for i := len(req.Input) - 1; i >= 0; i-- { // out of order, as the API allows
			vec := make([]float32, 16)
			for _, w := range strings.FieldsFunc(strings.ToLower(req.Input[i]), func(r rune) bool { return r == ' ' || r == ',' || r == '?' }) {
				for word, concept := range embedConcepts {
					if strings.Contains(w, word) {
						h := fnv.New32a()
						_, _ = h.Write([]byte(concept))
						vec[h.Sum32()%16] += 1
					}
				}
			}
			vec[15] += 0.01 // never all zero
			out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: vec})
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestOpenAIEmbedderWireFormat(t *testing.T) {
	var calls atomic.Int64
	srv := embedServer(t, 0, &calls)
	e := learning.NewOpenAIEmbedder(srv.URL+"/v1/", "text-embedding-3-small", "sk-test", 0, time.Second)
	vecs, err := e.Embed(context.Background(), []string{"coffee", "dentist", "weather"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 3 || slices.Equal(vecs[0], vecs[1]) || len(vecs[2]) != 16 {
		t.Fatalf("vectors %v", vecs)
	}
	bad := learning.NewOpenAIEmbedder(srv.URL+"/v1", "m", "sk-wrong", 0, time.Second)
	_, err = bad.Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "sk-wrong") {
		t.Fatalf("auth failure: %v", err)
	}
	slow := learning.NewOpenAIEmbedder(embedServer(t, 2*time.Second, &calls).URL+"/v1", "m", "sk-test", 0, 50*time.Millisecond)
	if _, err := slow.Embed(context.Background(), []string{"x"}); err == nil {
		t.Fatal("a call slower than the timeout must fail")
	}
}

// Hybrid recall finds across languages what lexical search cannot, and
// falls back to lexical, saying why, when the endpoint fails or is slow.
func TestHybridRecallAndDegrade(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		var calls atomic.Int64
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		routes := router.NewService(router.New(router.DefaultConfig()), db, 0)
		newRecaller := func(url string, timeout time.Duration) (*learning.Recaller, *learning.Embeddings) {
			e := learning.NewOpenAIEmbedder(url, "fake-multilingual", "sk-test", 0, timeout)
			rec := learning.NewRecaller(indextest.Wrap(db), routes, learning.NewScorer(learning.DefaultScoreConfig(), time.Now),
				storetest.Tokenizer(t), engram.DefaultRecallConfig(), time.Now).WithDense(e, db, learning.DenseConfig{Timeout: timeout, Weight: 0.3})
			return rec, learning.NewEmbeddings(e, db, db, db, "test-"+url, slog.New(slog.DiscardHandler))
		}
		// drain runs the follower until the feed holds nothing new for it.
		drain := func(emb *learning.Embeddings) error { return emb.CatchUp(context.Background()) }
		good := embedServer(t, 0, &calls)
		rec, emb := newRecaller(good.URL+"/v1", time.Second)
		for _, c := range []string{"User drinks espresso every morning", "Dentist appointment moved to Tuesday", "The team ships on Fridays"} {
			if _, err := db.CreateMemory(ctx, &engram.Memory{Content: c, Category: "life"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := drain(emb); err != nil {
			t.Fatal(err)
		}
		if calls.Load() != 1 {
			t.Fatalf("three new memories are embedded in one call; %d calls", calls.Load())
		}
		// A tag edit leaves the text as it was: nothing to embed again.
		m, err := db.FindMemories(ctx, engram.MemoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		tags := []string{"x"}
		if _, err := db.UpdateMemory(ctx, m.Items[0].ID, engram.MemoryUpdate{Tags: &tags}); err != nil {
			t.Fatal(err)
		}
		if err := drain(emb); err != nil || calls.Load() != 1 {
			t.Fatalf("a tag edit re-embedded: %d calls (%v)", calls.Load(), err)
		}
		got, err := rec.Recall(ctx, engram.RecallRequest{Query: "我想喝咖啡", TokenBudget: 200})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Items) == 0 || got.Items[0].Text != "User drinks espresso every morning" || len(got.DegradeReasons) != 0 {
			t.Fatalf("hybrid recall: %+v", got)
		}
		// No word of the query is in the memory: its match is the
		// embedding's agreement, which passes the relevance cut.
		if m := got.Items[0].Breakdown.Match; !(m > 0.3 && m < 1) {
			t.Errorf("the embedding's nearest memory has match %v", m)
		}

		down := httptest.NewServer(http.NotFoundHandler())
		down.Close()
		rec, broken := newRecaller(down.URL+"/v1", time.Second)
		if _, err := db.CreateMemory(ctx, &engram.Memory{Content: "Team lunch on Friday", Category: "life"}); err != nil {
			t.Fatalf("a failing endpoint must not fail a write: %v", err)
		}
		if err := drain(broken); err == nil {
			t.Fatal("a failing endpoint must report its error")
		}
		got, err = rec.Recall(ctx, engram.RecallRequest{Query: "when does the team ship?", TokenBudget: 200})
		if err != nil || !slices.Contains(got.DegradeReasons, "embeddings_error") || len(got.Items) == 0 {
			t.Fatalf("endpoint down: %+v %v", got, err)
		}
		// The failure released the tenant: a working follower (another
		// server) takes it up from the cursor and embeds what was missed.
		before := calls.Load()
		if err := drain(emb); err != nil || calls.Load() != before+1 {
			t.Fatalf("retry after a failure: %d calls (%v)", calls.Load()-before, err)
		}

		slow := embedServer(t, 2*time.Second, &calls)
		rec, _ = newRecaller(slow.URL+"/v1", 100*time.Millisecond)
		got, err = rec.Recall(ctx, engram.RecallRequest{Query: "when does the team ship?", TokenBudget: 200})
		if err != nil || !slices.Contains(got.DegradeReasons, "embeddings_timeout") || len(got.Items) == 0 {
			t.Fatalf("endpoint slow: %+v %v", got, err)
		}
	})
}
