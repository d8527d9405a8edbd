package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
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

// LatencyOptions sizes the latency run.
type LatencyOptions struct {
	Sizes   []int
	Budgets []int
	Queries int
	Seed    uint64
	// Remote, when set, returns a RecallService that reaches the named
	// tenant over HTTP (see HTTPRecall): each recall is then measured a
	// second time through it.
	Remote func(ctx context.Context, tenant string) (engram.RecallService, error)
}

// LatencyRow is one corpus size and budget.
type LatencyRow struct {
	Size, Budget        int
	IngestPerSec        float64
	P50, P99            float64 // recall, ms
	HTTPP50, HTTPP99    float64 // recall over HTTP, ms (0: not measured)
	FTSP50, FTSP99      float64 // bare full-text query, ms
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
		name := fmt.Sprintf("latency-%d", size)
		tctx, err := tenantCtx(ctx, svc.Auth, name)
		if err != nil {
			return nil, err
		}
		var remote engram.RecallService
		if opt.Remote != nil {
			if remote, err = opt.Remote(ctx, name); err != nil {
				return nil, err
			}
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
			var lat []float64
			var items, used float64
			for _, q := range queries {
				t0 := time.Now()
				rec, err := svc.Recall.Recall(tctx, engram.RecallRequest{Query: q, TokenBudget: budget})
				if err != nil {
					return nil, err
				}
				lat = append(lat, ms(time.Since(t0)))
				items += float64(len(rec.Items))
				used += float64(rec.TokensUsed)
			}
			n := float64(len(queries))
			row := LatencyRow{Size: size, Budget: budget, IngestPerSec: ingest,
				P50: percentile(lat, 50), P99: percentile(lat, 99), FTSP50: percentile(fts, 50), FTSP99: percentile(fts, 99),
				MeanItems: items / n, MeanUsed: used / n}
			if remote != nil {
				var hl []float64
				for _, q := range queries {
					t0 := time.Now()
					if _, err := remote.Recall(tctx, engram.RecallRequest{Query: q, TokenBudget: budget}); err != nil {
						return nil, err
					}
					hl = append(hl, ms(time.Since(t0)))
				}
				row.HTTPP50, row.HTTPP99 = percentile(hl, 50), percentile(hl, 99)
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// PrintLatency writes the rows as a Markdown table.
func PrintLatency(w io.Writer, rows []LatencyRow) {
	var out [][]string
	for _, r := range rows {
		ratio := r.P50 / math.Max(r.FTSP50, 1e-6)
		http := "–"
		if r.HTTPP50 > 0 {
			http = fmt.Sprintf("%.2f / %.2f", r.HTTPP50, r.HTTPP99)
		}
		out = append(out, []string{fmt.Sprint(r.Size), fmt.Sprint(r.Budget), fmt.Sprintf("%.2f", r.P50), fmt.Sprintf("%.2f", r.P99),
			http, fmt.Sprintf("%.2f", r.FTSP50), fmt.Sprintf("%.2f", r.FTSP99), fmt.Sprintf("%.1f×", ratio),
			fmt.Sprintf("%.1f", r.MeanItems), fmt.Sprintf("%.0f", r.MeanUsed), fmt.Sprintf("%.0f", r.IngestPerSec)})
	}
	table(w, []string{"memories", "budget", "recall p50 ms", "recall p99 ms", "over HTTP p50 / p99 ms", "bare FTS p50 ms", "bare FTS p99 ms",
		"p50 ratio", "items", "tokens used", "ingest memories/s"}, out)
}
