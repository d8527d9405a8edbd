package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/index/indextest"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/router"
	"github.com/engram-memory/engram/server"
	"github.com/engram-memory/engram/store/storetest"
)

// feedbackBenchServer serves the full service (recall and feedback) on a
// store with 200 memories and returns its URL, a key, a recall id whose
// injected memories the feedback is credited to, and a function that
// reads the tenant's event log size.
func feedbackBenchServer(b *testing.B, engine string) (string, string, string, func() int64) {
	b.Helper()
	db := storetest.Open(b, engine)
	ctx := context.Background()
	if _, err := db.EnsureTenant(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	_, key, err := db.CreateAPIKey(ctx, "bench", "bench")
	if err != nil {
		b.Fatal(err)
	}
	cfg := configs.Default()
	routes := router.NewService(router.New(router.DefaultConfig()), db, 0)
	scorer := learning.NewScorer(learning.NewScoreConfig(cfg.Scoring), time.Now)
	lim := cfg.Limits
	srv, err := server.New(server.Config{Memories: db, Auth: db, Health: db, Router: routes,
		Recall:   learning.NewRecaller(indextest.Wrap(db), routes, scorer, storetest.Tokenizer(b), cfg.Recall, time.Now),
		Feedback: learning.NewFeedback(db, scorer, cfg.Feedback),
		Limits:   server.Limits{MaxBodyBytes: lim.MaxBodyBytes, MaxJSONDepth: lim.MaxJSONDepth, MaxBatch: lim.MaxBatch, Keys: lim.KeyLimits()}})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	b.Cleanup(ts.Close)
	seed(b, ts.URL, key, 200)
	var rec struct {
		RecallID string `json:"recall_id"`
	}
	out := benchDo(b, "POST", ts.URL+"/v1/recall", key, []byte(`{"query":"meeting importer friday 咖啡","token_budget":300}`), http.StatusOK)
	if err := json.Unmarshal(out, &rec); err != nil {
		b.Fatal(err)
	}
	tenant, err := db.FindTenant(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	logBytes := func() int64 {
		n, err := db.EventLogBytes(engram.NewContextWithTenant(ctx, tenant.ID))
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	return ts.URL, key, rec.RecallID, logBytes
}

// benchServer serves a fresh store of engine over real loopback HTTP and
// returns its URL and an API key.
func benchServer(b *testing.B, engine string) (string, string) {
	b.Helper()
	db := storetest.Open(b, engine)
	ctx := context.Background()
	if _, err := db.EnsureTenant(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	_, key, err := db.CreateAPIKey(ctx, "bench", "bench")
	if err != nil {
		b.Fatal(err)
	}
	lim := configs.Default().Limits
	srv, err := server.New(server.Config{Memories: db, Auth: db, Health: db, Limits: server.Limits{
		MaxBodyBytes: lim.MaxBodyBytes, MaxJSONDepth: lim.MaxJSONDepth, MaxBatch: lim.MaxBatch, Keys: lim.KeyLimits()}})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	b.Cleanup(ts.Close)
	return ts.URL, key
}

func benchDo(b *testing.B, method, url, key string, body []byte, want int) []byte {
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		b.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, out)
	}
	return out
}

func benchMemory(i int) map[string]any {
	if i%2 == 0 {
		return map[string]any{"content": fmt.Sprintf("Meeting %d: the team agreed to ship the importer on Friday", i), "category": "work", "tags": []string{"meeting"}}
	}
	return map[string]any{"content": fmt.Sprintf("第%d条：用户喜欢喝咖啡，不加糖，下午不喝", i), "category": "preference", "tags": []string{"饮品"}}
}

// BenchmarkHTTPFeedbackParallel is BenchmarkHTTPFeedback from 16 clients
// at once: every feedback credits the same memories and adds to the
// tenant's totals, so it shows what serialises a tenant's feedback.
func BenchmarkHTTPFeedbackParallel(b *testing.B) {
	for _, engine := range storetest.Engines() {
		b.Run(engine, func(b *testing.B) {
			url, key, recallID, _ := feedbackBenchServer(b, engine)
			var n atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					body := fmt.Sprintf(`{"recall_id":%q,"thumb":"up","rater":"p%d"}`, recallID, i)
					benchDo(b, "POST", url+"/v1/feedback", key, []byte(body), http.StatusCreated)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "feedback/s")
		})
	}
}

// BenchmarkHTTPCreate reports memories/s for one POST per memory.
func BenchmarkHTTPCreate(b *testing.B) {
	for _, engine := range storetest.Engines() {
		b.Run(engine, func(b *testing.B) {
			url, key := benchServer(b, engine)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				body, _ := json.Marshal(benchMemory(i))
				benchDo(b, "POST", url+"/v1/memories", key, body, http.StatusCreated)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "memories/s")
		})
	}
}

// BenchmarkHTTPCreateBatch reports memories/s for batches of 100.
func BenchmarkHTTPCreateBatch(b *testing.B) {
	const size = 100
	for _, engine := range storetest.Engines() {
		b.Run(engine, func(b *testing.B) {
			url, key := benchServer(b, engine)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				batch := make([]map[string]any, size)
				for j := range batch {
					batch[j] = benchMemory(i*size + j)
				}
				body, _ := json.Marshal(map[string]any{"memories": batch})
				benchDo(b, "POST", url+"/v1/memories/batch", key, body, http.StatusOK)
			}
			b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "memories/s")
		})
	}
}

// seed stores n memories and returns their ids.
func seed(b *testing.B, url, key string, n int) []string {
	var ids []string
	for i := 0; i < n; i += 100 {
		batch := make([]map[string]any, 0, 100)
		for j := i; j < min(i+100, n); j++ {
			batch = append(batch, benchMemory(j))
		}
		body, _ := json.Marshal(map[string]any{"memories": batch})
		var res struct {
			Items []struct {
				Memory struct{ ID string } `json:"memory"`
			} `json:"items"`
		}
		if err := json.Unmarshal(benchDo(b, "POST", url+"/v1/memories/batch", key, body, http.StatusOK), &res); err != nil {
			b.Fatal(err)
		}
		for _, it := range res.Items {
			ids = append(ids, it.Memory.ID)
		}
	}
	return ids
}

// BenchmarkHTTPGet reads memories by id from a store of 10,000.
func BenchmarkHTTPGet(b *testing.B) {
	for _, engine := range storetest.Engines() {
		b.Run(engine, func(b *testing.B) {
			url, key := benchServer(b, engine)
			ids := seed(b, url, key, 10000)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				benchDo(b, "GET", url+"/v1/memories/"+ids[i%len(ids)], key, nil, http.StatusOK)
			}
		})
	}
}

// BenchmarkHTTPList reads a page of 50 (filtered by category, and by a
// lexical query) from a store of 10,000.
func BenchmarkHTTPList(b *testing.B) {
	for _, engine := range storetest.Engines() {
		b.Run(engine, func(b *testing.B) {
			url, key := benchServer(b, engine)
			seed(b, url, key, 10000)
			for name, q := range map[string]string{"category": "?category=work&limit=50", "query": "?q=咖啡&limit=50"} {
				b.Run(name, func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						benchDo(b, "GET", url+"/v1/memories"+q, key, nil, http.StatusOK)
					}
				})
			}
		})
	}
}

// BenchmarkHTTPFeedback posts thumbs on a recall over loopback HTTP, each
// from its own rater so that every one is credited to the memories the
// recall injected; it also reports the bytes each feedback added to the
// event log.
func BenchmarkHTTPFeedback(b *testing.B) {
	for _, engine := range storetest.Engines() {
		b.Run(engine, func(b *testing.B) {
			url, key, recallID, logBytes := feedbackBenchServer(b, engine)
			start := logBytes()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				thumb := "up"
				if i%3 == 0 {
					thumb = "down"
				}
				body := fmt.Sprintf(`{"recall_id":%q,"thumb":%q,"rater":"r%d"}`, recallID, thumb, i)
				benchDo(b, "POST", url+"/v1/feedback", key, []byte(body), http.StatusCreated)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "feedback/s")
			b.StopTimer()
			b.ReportMetric(float64(logBytes()-start)/float64(b.N), "event-bytes/feedback")
		})
	}
}
