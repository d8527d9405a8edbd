package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram"
)

// UsersHost is what the users benchmark drives: a database it seeds, and
// engram servers on it that it starts fresh and stops.
type UsersHost interface {
	// Seed stores ms for the tenant named tenant (made if new) in bulk.
	Seed(ctx context.Context, tenant string, ms []*engram.Memory) error
	// Key returns a bearer key of the tenant.
	Key(ctx context.Context, tenant string) (string, error)
	// Start starts a fresh server on the database (an empty index, the
	// snapshot files left by an earlier one) and returns its base URL.
	Start(ctx context.Context) (string, error)
	// Snapshot writes the tenant's index snapshot file in the running
	// server.
	Snapshot(ctx context.Context, tenant string) error
	// Warm waits until the running server has preloaded the tenants an
	// earlier one left snapshot files of.
	Warm(ctx context.Context) error
	// Stop stops the running server.
	Stop() error
}

// UsersOptions sizes the users benchmark: one big tenant of Users end
// users with PerUser memories each, and Tenants small tenants of
// PerTenant shared memories each. Sample users of the big tenant are
// also seeded alone, each in a tenant of its own with the same memories,
// and Sample small tenants are timed cold; Rounds warm recalls are timed
// per sampled user and tenant.
type UsersOptions struct {
	Users, PerUser     int
	Tenants, PerTenant int
	Sample, Rounds     int
	Budget             int
	Seed               uint64
}

// UsersFigure is the latency of one kind of recall, over HTTP.
type UsersFigure struct {
	Name     string
	N        int
	P50, P99 float64 // ms
}

// UsersMemory is the server process's memory at one point of the run,
// after a collection: Go's live heap and the resident set.
type UsersMemory struct {
	Name          string
	HeapMiB       float64
	RSSMiB        float64
	Count         int     // users or tenants warmed since the point before
	BytesPerCount float64 // live heap added per user or tenant warmed
}

// UsersResult is a users run.
type UsersResult struct {
	Opt          UsersOptions
	SeedPerSec   float64
	SeedSeconds  float64
	BigColdStore float64 // ms: the big tenant's first recall on a server with no snapshot
	Preload      float64 // ms: a fresh server's preload of the big tenant (from its snapshot file), from its start
	Figures      []UsersFigure
	Memory       []UsersMemory
}

// usersTenant names the tenants of the run.
func usersTenant(kind string, i int) string {
	if kind == "big" {
		return "users-big"
	}
	return fmt.Sprintf("users-%s-%05d", kind, i)
}

func userName(u int) string { return fmt.Sprintf("u%06d", u) }

// RunUsers seeds the tenants, then measures recall over HTTP against a
// fresh server: cold first recalls, warm recalls of a user in the big
// tenant beside the same user alone in a tenant, and the server's memory
// as users and tenants warm up; then a second fresh server's first
// recalls, with the snapshot files the first one left.
func RunUsers(ctx context.Context, host UsersHost, opt UsersOptions, progress io.Writer) (*UsersResult, error) {
	res := &UsersResult{Opt: opt}
	gen := newCorpus(opt.Seed)
	opt.Sample = min(opt.Sample, opt.Users, opt.Tenants)
	// The sampled users, spread over the big tenant, and their memories.
	sampled := map[int]int{} // user → sample index
	for i := range opt.Sample {
		sampled[i*opt.Users/opt.Sample] = i
	}
	own := make([][]*engram.Memory, opt.Sample)
	start := time.Now()
	seeded := 0
	const batch = 5000
	var pending []*engram.Memory
	flush := func(tenant string) error {
		if len(pending) == 0 {
			return nil
		}
		if err := host.Seed(ctx, tenant, pending); err != nil {
			return err
		}
		seeded += len(pending)
		pending = nil
		return nil
	}
	for u := range opt.Users {
		for range opt.PerUser {
			m := gen.memory()
			m.UserID = userName(u)
			if i, ok := sampled[u]; ok {
				c := *m
				own[i] = append(own[i], &c)
			}
			pending = append(pending, m)
		}
		if len(pending) >= batch {
			if err := flush(usersTenant("big", 0)); err != nil {
				return nil, err
			}
		}
		if progress != nil && u%10000 == 9999 {
			fmt.Fprintf(progress, "  %d/%d users seeded (%.0f s)\n", u+1, opt.Users, time.Since(start).Seconds())
		}
	}
	if err := flush(usersTenant("big", 0)); err != nil {
		return nil, err
	}
	for i, ms := range own {
		pending = ms
		if err := flush(usersTenant("alone", i)); err != nil {
			return nil, err
		}
	}
	for i := range opt.Tenants {
		for range opt.PerTenant {
			pending = append(pending, gen.memory())
		}
		if err := flush(usersTenant("small", i)); err != nil {
			return nil, err
		}
		if progress != nil && i%2000 == 1999 {
			fmt.Fprintf(progress, "  %d/%d tenants seeded (%.0f s)\n", i+1, opt.Tenants, time.Since(start).Seconds())
		}
	}
	res.SeedSeconds = time.Since(start).Seconds()
	res.SeedPerSec = float64(seeded) / res.SeedSeconds
	// Keys: one for the big tenant, one per tenant otherwise.
	bigKey, err := host.Key(ctx, usersTenant("big", 0))
	if err != nil {
		return nil, err
	}
	aloneKeys, err := keys(ctx, host, "alone", opt.Sample)
	if err != nil {
		return nil, err
	}
	smallKeys, err := keys(ctx, host, "small", opt.Tenants)
	if err != nil {
		return nil, err
	}
	// Each sampled user's queries: words of its own memories.
	rng := rand.New(rand.NewPCG(opt.Seed, 7))
	queries := make([][]string, opt.Sample)
	for i, ms := range own {
		for range opt.Rounds + 1 {
			queries[i] = append(queries[i], queryFrom(rng, ms[rng.IntN(len(ms))].Content))
		}
	}
	smallQuery := func() string { return gen.words(3 + gen.rng.IntN(3)) }
	users := make([]string, opt.Sample)
	for u, i := range sampled {
		users[i] = userName(u)
	}

	url, err := host.Start(ctx)
	if err != nil {
		return nil, err
	}
	c := &recallClient{url: url, http: &http.Client{Timeout: 10 * time.Minute}, budget: opt.Budget}
	fig := func(name string, lat []float64) {
		res.Figures = append(res.Figures, UsersFigure{Name: name, N: len(lat), P50: percentile(lat, 50), P99: percentile(lat, 99)})
	}
	mem := func(name string, count int) {
		m := processMemory(name)
		if n := len(res.Memory); n > 0 && count > 0 {
			m.Count, m.BytesPerCount = count, (m.HeapMiB-res.Memory[n-1].HeapMiB)*(1<<20)/float64(count)
		}
		res.Memory = append(res.Memory, m)
	}
	mem("server started", 0)
	lat, err := c.each(ctx, opt.Sample, func(i int) (string, string, string) { return smallKeys[i], "", smallQuery() })
	if err != nil {
		return nil, err
	}
	fig(fmt.Sprintf("first recall of a tenant of %d memories", opt.PerTenant), lat)
	mem(fmt.Sprintf("%d small tenants warmed", opt.Sample), opt.Sample)
	t0 := time.Now()
	if err := c.recall(ctx, bigKey, users[0], queries[0][0]); err != nil {
		return nil, err
	}
	res.BigColdStore = ms(time.Since(t0))
	mem(fmt.Sprintf("big tenant loaded (%d users)", opt.Users), opt.Users)
	if progress != nil {
		fmt.Fprintf(progress, "  big tenant's first recall %.0f ms; writing its snapshot\n", res.BigColdStore)
	}
	if err := host.Snapshot(ctx, usersTenant("big", 0)); err != nil {
		return nil, err
	}
	if lat, err = c.each(ctx, opt.Sample-1, func(i int) (string, string, string) { return bigKey, users[i+1], queries[i+1][0] }); err != nil {
		return nil, err
	}
	fig("first recall of a user in the warm big tenant", lat)
	if lat, err = c.each(ctx, opt.Sample, func(i int) (string, string, string) { return aloneKeys[i], users[i], queries[i][0] }); err != nil {
		return nil, err
	}
	fig(fmt.Sprintf("first recall of a tenant holding one user (%d memories)", opt.PerUser), lat)
	var big, alone []float64
	for r := 1; r <= opt.Rounds; r++ {
		for i := range opt.Sample {
			// Alternate which of the pair goes first.
			pair := [2]struct{ key string }{{bigKey}, {aloneKeys[i]}}
			if r%2 == 0 {
				pair[0], pair[1] = pair[1], pair[0]
			}
			for _, p := range pair {
				t0 := time.Now()
				if err := c.recall(ctx, p.key, users[i], queries[i][r]); err != nil {
					return nil, err
				}
				if p.key == bigKey {
					big = append(big, ms(time.Since(t0)))
				} else {
					alone = append(alone, ms(time.Since(t0)))
				}
			}
		}
	}
	fig(fmt.Sprintf("warm recall of a user in the big tenant (%d users × %d)", opt.Users, opt.PerUser), big)
	fig("warm recall of the same user alone in a tenant", alone)
	if lat, err = c.each(ctx, opt.Sample*opt.Rounds, func(i int) (string, string, string) { return smallKeys[i%opt.Sample], "", smallQuery() }); err != nil {
		return nil, err
	}
	fig(fmt.Sprintf("warm recall in a tenant of %d memories", opt.PerTenant), lat)
	mem("warm recalls done", 0)
	if rest := opt.Tenants - opt.Sample; rest > 0 {
		if lat, err = c.each(ctx, rest, func(i int) (string, string, string) { return smallKeys[opt.Sample+i], "", smallQuery() }); err != nil {
			return nil, err
		}
		fig(fmt.Sprintf("first recall of each other tenant of %d memories (%d)", opt.PerTenant, rest), lat)
		mem(fmt.Sprintf("all %d small tenants warmed", opt.Tenants), rest)
		// Still warm, unless the small tenants pushed the big one past
		// the index's memory bound.
		if lat, err = c.each(ctx, opt.Sample, func(i int) (string, string, string) { return bigKey, users[i], queries[i][opt.Rounds] }); err != nil {
			return nil, err
		}
		fig("recall of a user in the big tenant after all small tenants warmed", lat)
	}
	if err := host.Stop(); err != nil {
		return nil, err
	}

	if url, err = host.Start(ctx); err != nil {
		return nil, err
	}
	defer host.Stop()
	c.url = url
	t0 = time.Now()
	if err := host.Warm(ctx); err != nil {
		return nil, err
	}
	res.Preload = ms(time.Since(t0))
	if lat, err = c.each(ctx, opt.Sample, func(i int) (string, string, string) { return bigKey, users[i], queries[i][1] }); err != nil {
		return nil, err
	}
	fig("fresh server, after its preload: first recall of a user in the big tenant", lat)
	if lat, err = c.each(ctx, opt.Sample, func(i int) (string, string, string) { return smallKeys[i], "", smallQuery() }); err != nil {
		return nil, err
	}
	fig(fmt.Sprintf("fresh server: first recall of a tenant of %d memories", opt.PerTenant), lat)
	if lat, err = c.each(ctx, opt.Sample, func(i int) (string, string, string) { return aloneKeys[i], users[i], queries[i][1] }); err != nil {
		return nil, err
	}
	fig("fresh server: first recall of a tenant holding one user", lat)
	return res, nil
}

// keys returns a key of each of the first n tenants of kind.
func keys(ctx context.Context, host UsersHost, kind string, n int) ([]string, error) {
	out := make([]string, n)
	for i := range out {
		k, err := host.Key(ctx, usersTenant(kind, i))
		if err != nil {
			return nil, err
		}
		out[i] = k
	}
	return out, nil
}

// queryFrom draws a query from content: three of its words, or six
// characters of a text without spaces.
func queryFrom(rng *rand.Rand, content string) string {
	if f := strings.Fields(content); len(f) > 3 {
		i := rng.IntN(len(f) - 2)
		return strings.Join(f[i:i+3], " ")
	}
	r := []rune(content)
	i := rng.IntN(max(len(r)-5, 1))
	return string(r[i:min(i+6, len(r))])
}

// recallClient sends recalls to one server.
type recallClient struct {
	url    string
	http   *http.Client
	budget int
}

func (c *recallClient) recall(ctx context.Context, key, user, query string) error {
	_, err := loadDo(ctx, c.http, c.url+"/v1/recall", key, engram.RecallRequest{Query: query, TokenBudget: c.budget, UserID: user})
	return err
}

// each times n recalls, the ith with the key, user and query of at(i).
func (c *recallClient) each(ctx context.Context, n int, at func(i int) (key, user, query string)) ([]float64, error) {
	lat := make([]float64, 0, n)
	for i := range n {
		key, user, q := at(i)
		t0 := time.Now()
		if err := c.recall(ctx, key, user, q); err != nil {
			return nil, err
		}
		lat = append(lat, ms(time.Since(t0)))
	}
	return lat, nil
}

// processMemory reads this process's live heap after a collection and its
// resident set (Linux; 0 elsewhere).
func processMemory(name string) UsersMemory {
	runtime.GC()
	var st runtime.MemStats
	runtime.ReadMemStats(&st)
	m := UsersMemory{Name: name, HeapMiB: float64(st.HeapAlloc) / (1 << 20)}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				m.RSSMiB = kb / 1024
			}
		}
	}
	return m
}

// PrintUsers writes a users run as two Markdown tables: latency, and the
// server's memory.
func PrintUsers(w io.Writer, engine string, r *UsersResult) {
	o := r.Opt
	fmt.Fprintf(w, "%s: %d users × %d memories in one tenant, %d tenants × %d; %d sampled, %d warm rounds, budget %d; seeded %.0f memories/s (%.0f s, bulk inserts)\n\n",
		engine, o.Users, o.PerUser, o.Tenants, o.PerTenant, o.Sample, o.Rounds, o.Budget, r.SeedPerSec, r.SeedSeconds)
	var rows [][]string
	for _, f := range r.Figures {
		rows = append(rows, []string{f.Name, fmt.Sprint(f.N), fmt.Sprintf("%.2f", f.P50), fmt.Sprintf("%.2f", f.P99)})
	}
	table(w, []string{"recall over HTTP", "n", "p50 ms", "p99 ms"}, rows)
	if b, a := find(r.Figures, "warm recall of a user"), find(r.Figures, "warm recall of the same user"); b != nil && a != nil {
		fmt.Fprintf(w, "\nwarm p99, big tenant / alone: %.2f× (p50 %.2f×)\n", b.P99/a.P99, b.P50/a.P50)
	}
	fmt.Fprintf(w, "big tenant's first recall: %.0f ms on the first server (index and router model from the store); a fresh server's preload of it (index and router model from their snapshot files): %.0f ms\n\n",
		r.BigColdStore, r.Preload)
	rows = nil
	for _, m := range r.Memory {
		per := ""
		if m.Count > 0 {
			per = fmt.Sprintf("%.0f (%d)", m.BytesPerCount, m.Count)
		}
		rows = append(rows, []string{m.Name, fmt.Sprintf("%.1f", m.HeapMiB), fmt.Sprintf("%.1f", m.RSSMiB), per})
	}
	table(w, []string{"server process", "Go heap MiB", "RSS MiB", "heap bytes added per user or tenant warmed"}, rows)
}

func find(fs []UsersFigure, prefix string) *UsersFigure {
	for i := range fs {
		if strings.HasPrefix(fs[i].Name, prefix) {
			return &fs[i]
		}
	}
	return nil
}
