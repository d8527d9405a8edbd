package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"time"

	"github.com/engram-memory/engram"
)

// BareSearcher runs the engine's plain full-text query (FTS5 on SQLite,
// tsvector on PostgreSQL) for the tenant in ctx: the floor a recall is
// compared with.
type BareSearcher interface {
	BareFTS(ctx context.Context, text string, limit int) (int, error)
}

// IndexLoader loads the in-memory index of the tenant in ctx afresh, as a
// cold tenant's first recall does — from the store, or from the snapshot
// file Snapshot writes — and returns its estimated memory in bytes.
type IndexLoader interface {
	LoadCold(ctx context.Context, fromSnapshot bool) (int64, error)
	Snapshot(ctx context.Context) error
}

// LatencyOptions sizes the latency run. With Index set, each size also
// measures a cold tenant's load; with HTTP set (the API handler), recalls
// are measured over HTTP on a loopback listener too, next to the round
// trip of GET /healthz.
type LatencyOptions struct {
	Sizes   []int
	Budgets []int
	Queries int
	Seed    uint64
	Index   IndexLoader
	HTTP    http.Handler
}

// singleWrites is how many memories each size also creates one request at
// a time, for the unbatched ingest rate.
const singleWrites = 1000

// LatencyRow is one corpus size and budget.
type LatencyRow struct {
	Size, Budget        int
	IngestPerSec        float64 // batches of 500
	SinglePerSec        float64 // one memory a call
	P50, P99            float64 // recall in process, ms
	CPUP50, CPUP99      float64 // CPU time of the recall's thread in process, ms; NaN where not measured
	HTTPP50, HTTPP99    float64 // recall over HTTP, ms
	RTTP50, RTTP99      float64 // GET /healthz over HTTP, ms
	FTSP50, FTSP99      float64 // bare full-text query, ms
	LoadMS, SnapLoadMS  float64 // cold tenant: index load from the store, from its snapshot file
	IndexMiB, HeapMiB   float64 // the index's estimate; live heap it added
	MeanItems, MeanUsed float64
}

// corpus generates a reproducible bilingual corpus: sentences of English
// words and Chinese two-character words drawn from Zipf distributions, so
// a few words are very common and most are rare, as in real text.
type corpus struct {
	rng   *rand.Rand
	en    []string
	zh    []string
	zipfE *rand.Zipf
	zipfZ *rand.Zipf
}

var zhChars = []rune("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严")

func newCorpus(seed uint64) *corpus {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c := &corpus{rng: rng}
	// 5,000 English pseudo-words built from syllables: a vocabulary as
	// large as a working vocabulary, none of them stop words.
	syl := []string{"ka", "lo", "mi", "tar", "ven", "sul", "dre", "pho", "nix", "gra", "bel", "cor", "tun", "wex", "yal", "zen", "quo", "ram", "sti", "vel"}
	for i := 0; len(c.en) < 5000; i++ {
		w := syl[i%20] + syl[(i/20)%20]
		if i >= 400 {
			w += syl[(i/400)%20]
		}
		c.en = append(c.en, w)
	}
	for i := 0; i < len(zhChars)-1 && len(c.zh) < 3000; i++ {
		for j := 1; j <= 8 && len(c.zh) < 3000; j++ {
			c.zh = append(c.zh, string([]rune{zhChars[i], zhChars[(i+j*37)%len(zhChars)]}))
		}
	}
	c.zipfE = rand.NewZipf(rng, 1.1, 2, uint64(len(c.en)-1))
	c.zipfZ = rand.NewZipf(rng, 1.1, 2, uint64(len(c.zh)-1))
	return c
}

func (c *corpus) words(n int) string {
	var b strings.Builder
	chinese := c.rng.IntN(2) == 0
	for i := 0; i < n; i++ {
		if chinese {
			b.WriteString(c.zh[c.zipfZ.Uint64()])
		} else {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(c.en[c.zipfE.Uint64()])
		}
	}
	return b.String()
}

func (c *corpus) memory() *engram.Memory {
	cats := []string{"work", "life", "preference", "emotion", "strategy"}
	return &engram.Memory{
		Content:  c.words(8 + c.rng.IntN(24)),
		Category: cats[c.rng.IntN(len(cats))],
		Tags:     []string{c.en[c.rng.IntN(200)]},
	}
}

// RunLatency fills one tenant per size with a generated corpus and
// measures recall latency at each budget, next to the bare full-text
// query on the same data.
func RunLatency(ctx context.Context, svc Services, bare BareSearcher, opt LatencyOptions, progress io.Writer) ([]LatencyRow, error) {
	var rows []LatencyRow
	for _, size := range opt.Sizes {
		tctx, err := tenantCtx(ctx, svc.Auth, fmt.Sprintf("latency-%d", size))
		if err != nil {
			return nil, err
		}
		gen := newCorpus(opt.Seed + uint64(size))
		start := time.Now()
		const batch = 500
		for done := 0; done < size; done += batch {
			ms := make([]*engram.Memory, min(batch, size-done))
			for i := range ms {
				ms[i] = gen.memory()
			}
			if _, err := svc.Memories.CreateMemories(tctx, ms); err != nil {
				return nil, err
			}
			if progress != nil && (done/batch)%200 == 199 {
				fmt.Fprintf(progress, "  %d/%d memories\n", done+batch, size)
			}
		}
		ingest := float64(size) / time.Since(start).Seconds()
		start = time.Now()
		for range singleWrites {
			if _, err := svc.Memories.CreateMemory(tctx, gen.memory()); err != nil {
				return nil, err
			}
		}
		single := singleWrites / time.Since(start).Seconds()
		var load, snapLoad, indexMiB, heapMiB float64
		if opt.Index != nil {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			t0 := time.Now()
			bytes, err := opt.Index.LoadCold(tctx, false)
			if err != nil {
				return nil, err
			}
			load = ms(time.Since(t0))
			runtime.GC()
			runtime.ReadMemStats(&after)
			indexMiB = float64(bytes) / (1 << 20)
			heapMiB = (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / (1 << 20)
			if err := opt.Index.Snapshot(tctx); err != nil {
				return nil, err
			}
			t0 = time.Now()
			if _, err := opt.Index.LoadCold(tctx, true); err != nil {
				return nil, err
			}
			snapLoad = ms(time.Since(t0))
		}
		queries := make([]string, opt.Queries)
		for i := range queries {
			queries[i] = gen.words(3 + gen.rng.IntN(4))
		}
		var fts []float64
		for _, q := range queries {
			t0 := time.Now()
			if _, err := bare.BareFTS(tctx, q, 50); err != nil {
				return nil, err
			}
			fts = append(fts, ms(time.Since(t0)))
		}
		for _, budget := range opt.Budgets {
			lat, cpu, items, used, err := inProcess(tctx, svc.Recall, queries, budget)
			if err != nil {
				return nil, err
			}
			n := float64(len(queries))
			row := LatencyRow{Size: size, Budget: budget, IngestPerSec: ingest, SinglePerSec: single,
				P50: percentile(lat, 50), P99: percentile(lat, 99), CPUP50: percentile(cpu, 50), CPUP99: percentile(cpu, 99), FTSP50: percentile(fts, 50), FTSP99: percentile(fts, 99),
				LoadMS: load, SnapLoadMS: snapLoad, IndexMiB: indexMiB, HeapMiB: heapMiB, MeanItems: items / n, MeanUsed: used / n}
			if opt.HTTP != nil {
				if err := overHTTP(tctx, svc.Auth, opt.HTTP, fmt.Sprintf("latency-%d", size), queries, budget, &row); err != nil {
					return nil, err
				}
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// inProcess runs the recalls of queries one after the other on one
// thread and returns each one's wall time and its thread's CPU time, in
// ms (no CPU times where they are not measured), and the items and
// tokens they injected in all.
func inProcess(ctx context.Context, rs engram.RecallService, queries []string, budget int) (lat, cpu []float64, items, used float64, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, q := range queries {
		c0, measured := threadCPU()
		t0 := time.Now()
		rec, err := rs.Recall(ctx, engram.RecallRequest{Query: q, TokenBudget: budget})
		if err != nil {
			return nil, nil, 0, 0, err
		}
		lat = append(lat, ms(time.Since(t0)))
		if c1, ok := threadCPU(); ok && measured {
			cpu = append(cpu, ms(c1-c0))
		}
		items += float64(len(rec.Items))
		used += float64(rec.TokensUsed)
	}
	return lat, cpu, items, used, nil
}

// overHTTP measures the recalls of queries through the API on a loopback
// listener, and the round trip of GET /healthz beside each.
func overHTTP(ctx context.Context, auth engram.AuthService, h http.Handler, tenant string, queries []string, budget int, row *LatencyRow) error {
	_, secret, err := auth.CreateAPIKey(ctx, tenant, "bench")
	if err != nil {
		return err
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := srv.Client()
	do := func(method, path string, body []byte) error {
		req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("bench: %s %s: %s", method, path, resp.Status)
		}
		return nil
	}
	var lat, rtt []float64
	for _, q := range queries {
		body, err := json.Marshal(engram.RecallRequest{Query: q, TokenBudget: budget})
		if err != nil {
			return err
		}
		t0 := time.Now()
		if err := do("POST", "/v1/recall", body); err != nil {
			return err
		}
		lat = append(lat, ms(time.Since(t0)))
		t0 = time.Now()
		if err := do("GET", "/healthz", nil); err != nil {
			return err
		}
		rtt = append(rtt, ms(time.Since(t0)))
	}
	row.HTTPP50, row.HTTPP99 = percentile(lat, 50), percentile(lat, 99)
	row.RTTP50, row.RTTP99 = percentile(rtt, 50), percentile(rtt, 99)
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// PrintLatency writes the rows as a Markdown table.
func PrintLatency(w io.Writer, rows []LatencyRow) {
	var out [][]string
	f := func(x float64) string { return fmt.Sprintf("%.2f", x) }
	for _, r := range rows {
		// The floor of the goal: the bare query plus one HTTP round trip.
		floor := r.FTSP99 + r.RTTP99
		out = append(out, []string{fmt.Sprint(r.Size), fmt.Sprint(r.Budget), f(r.P50), f(r.P99), f(r.CPUP50), f(r.CPUP99), f(r.HTTPP50), f(r.HTTPP99),
			f(r.FTSP50), f(r.FTSP99), f(r.RTTP99), fmt.Sprintf("%.2f×", r.HTTPP99/math.Max(floor, 1e-6)),
			fmt.Sprintf("%.1f", r.MeanItems), fmt.Sprintf("%.0f", r.MeanUsed), fmt.Sprintf("%.0f", r.IngestPerSec),
			fmt.Sprintf("%.0f", r.SinglePerSec), fmt.Sprintf("%.0f / %.0f", r.LoadMS, r.SnapLoadMS), fmt.Sprintf("%.0f / %.0f", r.IndexMiB, r.HeapMiB)})
	}
	table(w, []string{"memories", "budget", "recall p50 ms", "recall p99 ms", "recall CPU p50 ms", "recall CPU p99 ms", "HTTP recall p50 ms", "HTTP recall p99 ms",
		"bare FTS p50 ms", "bare FTS p99 ms", "HTTP round trip p99 ms", "HTTP p99 / (FTS p99 + round trip p99)",
		"items", "tokens used", "ingest batched /s", "ingest single /s", "cold load ms: store / snapshot", "index MiB est. / heap"}, out)
}
