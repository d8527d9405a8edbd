package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/engram-memory/engram/store/storetest"
)

// sessionBenchServer serves the whole stack with working memory over real
// loopback HTTP and returns its URL and an API key.
func sessionBenchServer(b *testing.B, engine string) (string, string) {
	b.Helper()
	e := newSessionEnv(b, engine)
	if _, err := e.db.EnsureTenant(context.Background(), "bench"); err != nil {
		b.Fatal(err)
	}
	_, key, err := e.db.CreateAPIKey(context.Background(), "bench", "bench")
	if err != nil {
		b.Fatal(err)
	}
	return e.srv.URL, key
}

func benchMessage(i int) string {
	if i%2 == 0 {
		return fmt.Sprintf(`{"type":"message","speaker":"Ann","content":"Turn %d: we agreed to ship the importer on Friday after the review","at":"2023-05-08T13:56:00Z","message_id":"m%d"}`, i, i)
	}
	return fmt.Sprintf(`{"type":"message","role":"assistant","content":"第%d条：好的，周五评审之后发布导入工具","message_id":"m%d"}`, i, i)
}

// BenchmarkSessionEvents reports message events/s, each becoming an L2
// episode: one event per POST, and batches of 100.
func BenchmarkSessionEvents(b *testing.B) {
	for _, engine := range storetest.Engines() {
		b.Run(engine+"/single", func(b *testing.B) {
			url, key := sessionBenchServer(b, engine)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				benchDo(b, "POST", url+"/v1/sessions/chat-1/events", key, []byte(benchMessage(i)), http.StatusCreated)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
		b.Run(engine+"/batch100", func(b *testing.B) {
			url, key := sessionBenchServer(b, engine)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				evs := make([]string, 100)
				for j := range evs {
					evs[j] = benchMessage(i*100 + j)
				}
				benchDo(b, "POST", url+"/v1/sessions/chat-1/events", key, []byte(`{"events":[`+strings.Join(evs, ",")+`]}`), http.StatusCreated)
			}
			b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkSessionContext reports GET /v1/sessions/{id}/context latency
// on a session of 1,000 events (agent rounds: a user message, a tool
// call, a decision, an answer).
func BenchmarkSessionContext(b *testing.B) {
	for _, engine := range storetest.Engines() {
		b.Run(engine, func(b *testing.B) {
			url, key := sessionBenchServer(b, engine)
			for r := 0; r < 10; r++ {
				evs := make([]string, 0, 100)
				for i := r * 25; i < (r+1)*25; i++ {
					evs = append(evs,
						fmt.Sprintf(`{"type":"message","role":"user","content":"question %d about the release plan and the importer"}`, i),
						fmt.Sprintf(`{"type":"tool_call","name":"search","args":{"q":"release %d"},"result":"%d results"}`, i, i),
						fmt.Sprintf(`{"type":"decision","content":"ship step %d after the review"}`, i),
						fmt.Sprintf(`{"type":"message","role":"assistant","content":"answer %d: ship it on Friday after the review"}`, i))
				}
				benchDo(b, "POST", url+"/v1/sessions/run/events", key, []byte(`{"events":[`+strings.Join(evs, ",")+`]}`), http.StatusCreated)
			}
			for _, limit := range []int{500, 4000} {
				b.Run(fmt.Sprintf("limit%d", limit), func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						benchDo(b, "GET", fmt.Sprintf("%s/v1/sessions/run/context?token_limit=%d", url, limit), key, nil, http.StatusOK)
					}
				})
			}
		})
	}
}
