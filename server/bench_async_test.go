package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// BenchmarkHTTPFeedbackAsyncParallel is BenchmarkHTTPFeedbackParallel with
// Prefer: respond-async: acknowledged/s is the 202 answers' rate,
// applied/s counts until the last one is applied (the drain after the
// run included), and the lag is the time from a 202 to GET
// /v1/feedback/{id} seeing it applied, sampled every 20 ms during the run.
func BenchmarkHTTPFeedbackAsyncParallel(b *testing.B) {
	for _, engine := range storetest.Engines() {
		b.Run(engine, func(b *testing.B) {
			url, key, recallID, _ := feedbackBenchServer(b, engine)
			var n atomic.Int64
			type ack struct {
				id string
				at time.Time
			}
			var last atomic.Pointer[ack]
			var mu sync.Mutex
			var lags []time.Duration
			stop := make(chan struct{})
			sampled := make(chan struct{})
			status := func(id string) string {
				var st engram.FeedbackStatus
				if err := json.Unmarshal(benchDo(b, "GET", url+"/v1/feedback/"+id, key, nil, http.StatusOK), &st); err != nil {
					b.Error(err)
				}
				return st.Status
			}
			go func() {
				defer close(sampled)
				for {
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
					a := last.Load()
					if a == nil {
						continue
					}
					for status(a.id) != engram.FeedbackApplied {
						time.Sleep(time.Millisecond)
					}
					mu.Lock()
					lags = append(lags, time.Since(a.at))
					mu.Unlock()
				}
			}()
			b.SetParallelism(8)
			b.ResetTimer()
			began := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					body := fmt.Sprintf(`{"recall_id":%q,"thumb":"up","rater":"p%d"}`, recallID, i)
					id := asyncPost(b, url, key, body)
					last.Store(&ack{id, time.Now()})
				}
			})
			acked := time.Since(began)
			close(stop)
			<-sampled
			if a := last.Load(); a != nil {
				for status(a.id) != engram.FeedbackApplied {
					time.Sleep(time.Millisecond)
				}
			}
			applied := time.Since(began)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/acked.Seconds(), "acked/s")
			b.ReportMetric(float64(b.N)/applied.Seconds(), "applied/s")
			b.ReportMetric((applied-acked).Seconds()*1000, "drain-ms")
			if len(lags) > 0 {
				slices.Sort(lags)
				b.ReportMetric(float64(lags[len(lags)/2].Microseconds())/1000, "lag-p50-ms")
				b.ReportMetric(float64(lags[len(lags)*99/100].Microseconds())/1000, "lag-p99-ms")
			}
		})
	}
}

// asyncPost posts one feedback with Prefer: respond-async, wants 202 and
// returns its id.
func asyncPost(b *testing.B, url, key, body string) string {
	req, _ := http.NewRequest("POST", url+"/v1/feedback", bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "respond-async")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	var st engram.FeedbackStatus
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(out, &st) != nil {
		b.Fatalf("async feedback: %d %s", resp.StatusCode, out)
	}
	return st.FeedbackID
}
