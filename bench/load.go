package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// LoadOptions shapes a load run: Clients concurrent clients, each
// sending creates, recalls and feedback on its own recalls for Duration,
// spread over the servers at URLs (one database behind them all).
type LoadOptions struct {
	URLs     []string
	Key      string // bearer key of the tenant under load
	Clients  int
	Duration time.Duration
	Seed     int // memories created before the clock starts
	// FeedbackOnly sends feedback alone: each client makes one recall
	// before the clock starts and then posts thumbs on it, each from a
	// rater of its own, so every post is credited (the feedback path's
	// throughput, as BenchmarkHTTPFeedbackParallel measures it in process).
	FeedbackOnly bool
	// Ready, when set, runs once the seed is stored and before the clock
	// starts (the bench command brings PostgreSQL's statistics up to
	// date there, see store.DB.AnalyzeTables).
	Ready func(context.Context) error
}

// LoadKind is one kind of request of a load run.
type LoadKind struct {
	Name     string
	Requests int
	Errors   int
	P50, P99 float64 // ms
}

// LoadResult is a whole load run.
type LoadResult struct {
	Servers, Clients int
	Elapsed          time.Duration
	Kinds            []LoadKind
	Samples          []string // the first few error responses
}

// Total is the number of requests and errors of every kind.
func (r LoadResult) Total() (requests, errors int) {
	for _, k := range r.Kinds {
		requests += k.Requests
		errors += k.Errors
	}
	return requests, errors
}

// loadKinds are the kinds a client sends, in turn: a recall, feedback on
// that recall (through the next server, so on two servers feedback
// usually names a recall another server just made), then a create.
var loadKinds = []string{"recall", "feedback", "create"}

// RunLoad runs a load of creates, recalls and feedback against running
// servers and reports requests per second, latency per kind and errors
// (any answer other than the expected 2xx, or no answer).
func RunLoad(ctx context.Context, opt LoadOptions) (LoadResult, error) {
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: opt.Clients * 2}}
	gen := newCorpus(42)
	for done := 0; done < opt.Seed; done += 100 {
		batch := make([]map[string]any, min(100, opt.Seed-done))
		for i := range batch {
			m := gen.memory()
			batch[i] = map[string]any{"content": m.Content, "category": m.Category, "tags": m.Tags}
		}
		if _, err := loadDo(ctx, client, opt.URLs[0]+"/v1/memories/batch", opt.Key, map[string]any{"memories": batch}); err != nil {
			return LoadResult{}, fmt.Errorf("bench load: seed: %w", err)
		}
	}
	// Every client draws its texts from its own generator.
	type sample struct {
		kind int
		ms   float64
		err  string
	}
	results := make([][]sample, opt.Clients)
	first := make([]string, opt.Clients) // FeedbackOnly: each client's recall
	if opt.FeedbackOnly {
		for c := range first {
			out, err := loadDo(ctx, client, opt.URLs[c%len(opt.URLs)]+"/v1/recall", opt.Key, map[string]any{"query": gen.words(4), "token_budget": 500})
			if err != nil {
				return LoadResult{}, fmt.Errorf("bench load: recall to rate: %w", err)
			}
			var rec struct {
				RecallID string `json:"recall_id"`
			}
			if err := json.Unmarshal(out, &rec); err != nil || rec.RecallID == "" {
				return LoadResult{}, fmt.Errorf("bench load: recall to rate: no recall_id in %s", out)
			}
			first[c] = rec.RecallID
		}
	}
	if opt.Ready != nil {
		if err := opt.Ready(ctx); err != nil {
			return LoadResult{}, fmt.Errorf("bench load: %w", err)
		}
	}
	deadline := time.Now().Add(opt.Duration)
	start := time.Now()
	var wg sync.WaitGroup
	for c := range opt.Clients {
		wg.Go(func() {
			gen := newCorpus(uint64(1000 + c))
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			recallID := first[c]
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				kind := i % len(loadKinds)
				if opt.FeedbackOnly {
					kind = slices.Index(loadKinds, "feedback")
				}
				url := opt.URLs[(c+i)%len(opt.URLs)]
				var path string
				var body any
				switch loadKinds[kind] {
				case "recall":
					path, body = "/v1/recall", map[string]any{"query": gen.words(3 + rng.IntN(4)), "token_budget": 500}
				case "feedback":
					if recallID == "" {
						continue
					}
					thumb := []string{"up", "down"}[rng.IntN(2)]
					path, body = "/v1/feedback", map[string]any{"recall_id": recallID, "thumb": thumb, "rater": fmt.Sprintf("client-%d-%d", c, i)}
				case "create":
					m := gen.memory()
					path, body = "/v1/memories", map[string]any{"content": m.Content, "category": m.Category, "tags": m.Tags}
				}
				t0 := time.Now()
				out, err := loadDo(ctx, client, url+path, opt.Key, body)
				s := sample{kind: kind, ms: ms(time.Since(t0))}
				if err != nil {
					s.err = fmt.Sprintf("%s %s: %v", loadKinds[kind], url, err)
				} else if kind == 0 {
					var rec struct {
						RecallID string `json:"recall_id"`
					}
					_ = json.Unmarshal(out, &rec)
					recallID = rec.RecallID
				}
				results[c] = append(results[c], s)
			}
		})
	}
	wg.Wait()
	res := LoadResult{Servers: len(opt.URLs), Clients: opt.Clients, Elapsed: time.Since(start)}
	for k, name := range loadKinds {
		if opt.FeedbackOnly && name != "feedback" {
			continue
		}
		var lat []float64
		kind := LoadKind{Name: name}
		for _, rs := range results {
			for _, s := range rs {
				if s.kind != k {
					continue
				}
				kind.Requests++
				lat = append(lat, s.ms)
				if s.err != "" {
					kind.Errors++
					if len(res.Samples) < 5 {
						res.Samples = append(res.Samples, s.err)
					}
				}
			}
		}
		kind.P50, kind.P99 = percentile(lat, 50), percentile(lat, 99)
		res.Kinds = append(res.Kinds, kind)
	}
	return res, nil
}

// loadDo POSTs body as JSON and returns the response body; a status
// outside 2xx is an error carrying the body.
func loadDo(ctx context.Context, client *http.Client, url, key string, body any) ([]byte, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%d %s", resp.StatusCode, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// PrintLoad writes load runs as a Markdown table, one row per run and
// kind, then the first error responses of each run.
func PrintLoad(w io.Writer, engine string, runs []LoadResult) {
	var rows [][]string
	for _, r := range runs {
		n, errs := r.Total()
		rows = append(rows, []string{engine, fmt.Sprint(r.Servers), fmt.Sprint(r.Clients), fmt.Sprintf("%.0f", r.Elapsed.Seconds()),
			"all", fmt.Sprint(n), fmt.Sprintf("%.1f", float64(n)/r.Elapsed.Seconds()), "", "", fmt.Sprint(errs)})
		for _, k := range r.Kinds {
			rows = append(rows, []string{engine, fmt.Sprint(r.Servers), fmt.Sprint(r.Clients), "", k.Name, fmt.Sprint(k.Requests),
				fmt.Sprintf("%.1f", float64(k.Requests)/r.Elapsed.Seconds()), fmt.Sprintf("%.1f", k.P50), fmt.Sprintf("%.1f", k.P99), fmt.Sprint(k.Errors)})
		}
	}
	table(w, []string{"engine", "servers", "clients", "s", "kind", "requests", "per s", "p50 ms", "p99 ms", "errors"}, rows)
	for _, r := range runs {
		for _, s := range slices.Compact(r.Samples) {
			fmt.Fprintf(w, "error (%d servers): %s\n", r.Servers, s)
		}
	}
}
