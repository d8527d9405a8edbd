package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/bench"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/index"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/server"
	"github.com/engram-memory/engram/store"
)

// runBench runs a benchmark on a fresh store: SQLite in a temporary
// directory (removed afterwards), or the PostgreSQL that ENGRAM_STORE_*
// names.
func runBench(ctx context.Context, args, environ []string, stdout io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stdout, benchVerbs.usage())
		return nil
	}
	v, err := benchVerbs.dispatch(args, stdout)
	if err != nil {
		return err
	}
	verb := strings.TrimPrefix(v.name, "bench ")
	fs := newFlags(v)
	configPath := fs.String("config", "", "YAML config file (replay: its scoring and feedback sections)")
	data := fs.String("data", "", "dataset file (locomo, gate: locomo10.json; router: a labelled JSON Lines file instead of the built-in sets)")
	budget := fs.Int("budget", 8000, "token budget of each recall (locomo, users)")
	sizes := fs.String("sizes", "10000,100000", "comma-separated corpus sizes (latency)")
	budgets := fs.String("budgets", "500,2000", "comma-separated token budgets (latency)")
	queries := fs.Int("queries", 300, "recalls per size and budget (latency); recalls per figure (knowledge; 0: everyone)")
	hops := fs.Int("hops", -1, "locomo: every recall's hops, 0-2 (links followed from the best matches); the default when -1")
	split := fs.String("split", "", "locomo: the conversations asked, tuning (0-4) or heldout (5-9); all when empty")
	sessions := fs.Bool("sessions", false, "locomo: post each LoCoMo session's turns as session messages (speaker, content, at, message_id) and let engram build the episodes")
	plain := fs.Bool("plain", false, "locomo: store each turn as the BM25 baseline's row only (\"Speaker: text [shares caption]\"), without the speaker tag, date or previous turn as context")
	feedback := fs.Bool("feedback", false, "locomo: measure the learning effect of thumbs (clean, then poisoned)")
	poison := fs.Float64("poison", 0.2, "locomo --feedback: share of thumbs a hostile rater flips")
	feedbackBudget := fs.Int("feedback-budget", 400, "locomo --feedback: token budget of the judged recalls")
	feedbackEvents := fs.Int("feedback-events", 10000, "reflect: feedback events on one tenant, for the event log before and after a sleep (0: skip)")
	seeds := fs.String("seeds", "1", "learning: comma-separated seeds (1, 11-19 and 61-64 tune; 2-9, 21-26 and 31-40 are reported; 41-50 and 71-110 are held out for final reports, see docs/learning-model.md); knowledge: comma-separated seeds (1 tunes; 2-5 are reported)")
	entities := fs.Int("entities", 2000, "knowledge: people in the generated tenant (each with 4 facts; a quarter change one)")
	mix := fs.String("mix", bench.DefaultMix, "learning: misleading memories per question of each kind, kind=share,…")
	rounds := fs.Int("rounds", 1, "learning: times each training question is asked and judged")
	convs := fs.Int("conversations", 0, "learning: use only the first n conversations (0: all)")
	traceFile := fs.String("trace", "", "learning: write every measured and judged recall to this file, one JSON line each; locomo: every question's candidates; replay: the learning trace to replay")
	def := learning.DefaultPolicy()
	policy := def
	fs.Float64Var(&policy.FeatureMin, "feature-min", def.FeatureMin, "replay: least evidence, in judged recalls, before a feature moves a memory")
	fs.Int64Var(&policy.KindImpactMin, "kind-impact-min", def.KindImpactMin, "replay: fewest judged recalls in each impact arm before kind probes' measure of a feature is heeded")
	fs.Float64Var(&policy.FeaturePrior, "feature-prior", def.FeaturePrior, "replay: weight, in judged recalls, of the tenant's rate in a feature's estimate")
	fs.Float64Var(&policy.FeatureZ, "feature-z", def.FeatureZ, "replay: standard deviations a feature's rate must stand off the tenant's")
	fs.Float64Var(&policy.FeaturePower, "feature-power", def.FeaturePower, "replay: power of the feature factor")
	fs.Float64Var(&policy.KindHalf, "kind-half", def.KindHalf, "replay: rank at which a bad answer's evidence against a memory's kinds halves (damping of riders)")
	fs.Float64Var(&policy.BeliefPower, "belief-power", def.BeliefPower, "replay: power of the kind belief that shares out a good answer's credit")
	fs.Float64Var(&policy.OriginPower, "origin-power", def.OriginPower, "replay: power of the origin factor")
	fs.Float64Var(&policy.DistrustShare, "distrust-share", def.DistrustShare, "replay: share of a memory's other distrusted features' weights added to its most distrusted one's")
	fs.Float64Var(&policy.TrustShare, "trust-share", def.TrustShare, "replay: share of a memory's most trusted feature's weight that forgives its most distrusted one's")
	sameOrigin := fs.Bool("same-origin", false, "learning: write the misleading memories with the turns' source and type")
	keep := fs.String("keep", "", "store the benchmark database in this directory instead of a temporary one")
	clients := fs.Int("clients", 32, "load: concurrent clients")
	asyncFeedback := fs.Bool("async-feedback", false, "load: the servers answer feedback 202 once queued (feedback.async)")
	feedbackOnly := fs.Bool("feedback-only", false, "load: feedback alone, each client rating one recall made before the clock starts")
	duration := fs.Duration("duration", time.Minute, "load: how long each run lasts")
	servers := fs.String("servers", "1,2", "load: comma-separated numbers of servers on the one database, one run each")
	seedMemories := fs.Int("seed", 2000, "load: memories stored before each run")
	analyze := fs.Bool("analyze", true, "load: on PostgreSQL, bring the planner's statistics up to date once the seed is stored, as autovacuum keeps a serving database's")
	users := fs.Int("users", 100000, "users: end users in the big tenant")
	perUser := fs.Int("per-user", 20, "users: memories of each end user")
	tenants := fs.Int("tenants", 10000, "users: small tenants")
	perTenant := fs.Int("per-tenant", 100, "users: memories of each small tenant")
	sample := fs.Int("sample", 200, "users: users and tenants timed cold (each one's first recall), and warm")
	warmRounds := fs.Int("warm-rounds", 5, "users: warm recalls of each sampled user and tenant")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run (servers included) to this file")
	if err := parseBenchFlags(fs, v, verb, args[1:], stdout); err != nil {
		return err
	}
	if verb == "gate" {
		if *data == "" {
			return errors.New("bench gate: --data locomo10.json is required")
		}
		splits, err := bench.RunGate(*data)
		if err != nil {
			return err
		}
		bench.PrintGate(stdout, splits)
		return nil
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	cfg, err := configs.Load(*configPath, environ)
	if err != nil {
		return err
	}
	if verb == "replay" {
		return benchReplay(*traceFile, policy, learning.NewScoreConfig(cfg.Scoring), cfg.Feedback, stdout)
	}
	if verb == "load" {
		counts, err := intList(*servers)
		if err != nil {
			return err
		}
		cfg.Feedback.Async = cfg.Feedback.Async || *asyncFeedback
		return runLoad(ctx, cfg, *keep, counts, *analyze, bench.LoadOptions{Clients: *clients, Duration: *duration, Seed: *seedMemories, FeedbackOnly: *feedbackOnly}, stdout)
	}
	if verb == "users" {
		if *users < 1 || *perUser < 1 || *tenants < 1 || *perTenant < 1 || *sample < 1 || *warmRounds < 1 {
			return errors.New("bench users: --users, --per-user, --tenants, --per-tenant, --sample and --warm-rounds must be positive")
		}
		return runUsers(ctx, cfg, *keep, bench.UsersOptions{Users: *users, PerUser: *perUser, Tenants: *tenants, PerTenant: *perTenant,
			Sample: *sample, Rounds: *warmRounds, Budget: *budget, Seed: 1}, stdout)
	}
	cfg.DataDir = *keep
	if cfg.DataDir == "" {
		dir, err := os.MkdirTemp("", "engram-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.DataDir = dir
	}
	cfg.Recall.MaxBudget = max(cfg.Recall.MaxBudget, *budget)
	if verb == "reflect" {
		// Fold feedback events at once, so the event log is measured
		// before and after folding in one run.
		cfg.Sleep.CompactAfter = time.Nanosecond
	}
	if verb == "locomo" && !*feedback {
		// The recall-quality run measures the ranking and the cut:
		// exploration would hold back one of the best memories of a
		// random 3% of recalls and make the figures vary from run to run.
		cfg.Learning.Explore, cfg.Learning.ExploreKinds = 0, 0
	}
	cfg.Server.LogLevel = "warn"
	logger := NewLogger(cfg, os.Stderr)
	db, err := Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer db.Close()
	services, err := NewServices(cfg, db, logger)
	if err != nil {
		return err
	}
	svc := bench.Services{Auth: db, Memories: services.Memories, Recall: services.Recall, Router: services.Router,
		Feedback: services.Feedback, Reflections: services.Reflections, Sleep: services.Sleep, Sessions: services.Working}
	if services.Embeddings != nil {
		svc.Settle = services.Embeddings.CatchUp
	}
	switch verb {
	case "locomo":
		if *data == "" {
			return errors.New("bench locomo: --data locomo10.json is required")
		}
		if *feedback {
			if *plain || *sessions {
				return errors.New("bench locomo: --plain and --sessions apply to the recall-quality run, not --feedback")
			}
			if err := measureApart(&svc, cfg, db, logger, services); err != nil {
				return err
			}
			opt := bench.FeedbackOptions{Path: *data, FeedbackBudget: *feedbackBudget, EvalBudget: *budget, Seed: 1}
			clean, err := bench.RunLoCoMoFeedback(ctx, svc, opt, "clean-")
			if err != nil {
				return err
			}
			opt.Poison = *poison
			poisoned, err := bench.RunLoCoMoFeedback(ctx, svc, opt, "poisoned-")
			if err != nil {
				return err
			}
			bench.PrintFeedback(stdout, clean, poisoned, *poison)
			return nil
		}
		if *plain && *sessions {
			return errors.New("bench locomo: choose one of --plain and --sessions")
		}
		opt := bench.LoCoMoOptions{Path: *data, Budget: *budget, Plain: *plain, Sessions: *sessions, Split: *split}
		if *hops >= 0 {
			opt.Hops = hops
		}
		if *traceFile != "" {
			f, err := os.Create(*traceFile)
			if err != nil {
				return err
			}
			defer f.Close()
			trace := bufio.NewWriter(f)
			defer trace.Flush()
			opt.Trace = trace
		}
		rep, err := bench.RunLoCoMo(ctx, svc, opt)
		if err != nil {
			return err
		}
		if e := cfg.Embeddings; e.BaseURL != "" {
			// The figures depend on the encoder: say which one made them.
			fmt.Fprintf(stdout, "Hybrid recall: embeddings model %q, weight %g, agree floor %g\n\n", e.Model, e.Weight, e.AgreeFloor)
		}
		rep.Print(stdout)
	case "learning":
		if *data == "" {
			return errors.New("bench learning: --data locomo10.json is required")
		}
		m, err := bench.ParseMix(*mix)
		if err != nil {
			return err
		}
		list, err := intList(*seeds)
		if err != nil {
			return err
		}
		if err := measureApart(&svc, cfg, db, logger, services); err != nil {
			return err
		}
		var trace *bufio.Writer
		if *traceFile != "" {
			f, err := os.Create(*traceFile)
			if err != nil {
				return err
			}
			defer f.Close()
			trace = bufio.NewWriter(f)
		}
		opt := bench.LearningOptions{Path: *data, Mix: m, FeedbackBudget: *feedbackBudget, EvalBudget: *budget,
			Rounds: *rounds, Conversations: *convs, SameOrigin: *sameOrigin}
		if trace != nil {
			opt.Trace = trace
		}
		out, err := bench.RunLearningSeeds(ctx, svc, opt, list, *poison, os.Stderr)
		if err != nil {
			return err
		}
		if trace != nil {
			if err := trace.Flush(); err != nil {
				return fmt.Errorf("bench learning: trace: %w", err)
			}
		}
		bench.PrintLearning(stdout, out, *mix)
	case "knowledge":
		if err := benchKnowledge(ctx, cfg, db, logger, svc, *entities, *queries, *budget, *seeds, stdout); err != nil {
			return err
		}
	case "latency":
		handler, err := server.New(server.Config{
			Memories: services.Memories, Auth: db, Health: db, Router: services.Router, Recall: services.Recall,
			Feedback: services.Feedback, Logger: logger,
			Limits: server.Limits{
				MaxBodyBytes: cfg.Limits.MaxBodyBytes, MaxJSONDepth: cfg.Limits.MaxJSONDepth,
				MaxBatch: cfg.Limits.MaxBatch, Keys: cfg.Limits.KeyLimits(), MaxBudget: cfg.Recall.MaxBudget,
			},
		})
		if err != nil {
			return err
		}
		opt := bench.LatencyOptions{Queries: *queries, Seed: 1, Index: coldIndex{services.Index}, HTTP: handler}
		if opt.Sizes, err = intList(*sizes); err != nil {
			return err
		}
		if opt.Budgets, err = intList(*budgets); err != nil {
			return err
		}
		rows, err := bench.RunLatency(ctx, svc, db, opt, os.Stderr)
		if err != nil {
			return err
		}
		bench.PrintLatency(stdout, rows)
	case "reflect":
		opt := bench.ReflectOptions{LoCoMo: *data, Feedback: *feedbackEvents, Seed: 1}
		if *sizes != "" {
			if opt.Sizes, err = intList(*sizes); err != nil {
				return err
			}
		}
		rows, err := bench.RunReflect(ctx, svc, opt, os.Stderr)
		if err != nil {
			return err
		}
		bench.PrintReflect(stdout, rows)
	case "router":
		// An empty tenant: the built-in rules alone, as a new user gets them.
		ctx := engram.NewContextWithTenant(ctx, "bench-router")
		for _, name := range bench.RouterSets {
			items, err := bench.LoadRouterSet(name)
			if *data != "" {
				name = *data
				items, err = bench.LoadLabelled(*data)
			}
			if err != nil {
				return err
			}
			rep, err := bench.EvaluateRouter(ctx, services.Router, items)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s (%d queries, empty tenant: built-in rules only)\n%s\n", name, len(items), rep)
			if *data != "" {
				break
			}
		}
	}
	return nil
}

// benchVerbs are the benchmarks engram bench runs; `engram bench` alone
// lists them.
var benchVerbs = group{name: "bench", subs: []verb{
	{name: "bench locomo", summary: "Recall quality and latency on LoCoMo (--data locomo10.json; --plain: the BM25 baseline's input,\n--sessions: turns posted as session messages, --feedback: the learning effect of thumbs)."},
	{name: "bench learning", summary: "Feedback against misleading memories on LoCoMo, over seeds (--data locomo10.json)."},
	{name: "bench replay", summary: "Relearn the thumbs of a bench learning trace (--trace F) through the learning code under a policy\nvariant and re-rank its held-out recalls: the recovery in seconds."},
	{name: "bench knowledge", summary: "Knowledge updates on generated people sharing surnames, cities, pets and jobs: the new value\nabove the stale one, with the knowledge update on and off."},
	{name: "bench latency", summary: "Recall latency at scale, in process and over HTTP on a loopback listener (with the round trip\nof GET /healthz beside it), against the engine's bare full-text search."},
	{name: "bench load", summary: "Concurrent creates, recalls and feedback from clients on one or more servers sharing one database."},
	{name: "bench users", summary: "Per-user recall at scale over HTTP: a user of a tenant of many users beside the same user alone\nin a tenant, many small tenants, cold first recalls, and the server's memory."},
	{name: "bench reflect", summary: "The reflector and the sleep cycle: correctness on LoCoMo, time at scale, event log folding."},
	{name: "bench gate", summary: "The write gate on LoCoMo's true turns (what it would refuse) and on bad notes it should refuse\n(--data locomo10.json; tuning and held-out splits)."},
	{name: "bench router", summary: "Router accuracy on the built-in labelled sets (or --data labelled.jsonl)."},
}}

// benchFlags are the flags each benchmark reads, besides --cpuprofile
// and (all but replay) --config and --keep: its --help lists only these, and it refuses
// the others rather than ignore them.
var benchFlags = map[string][]string{
	"locomo":    {"data", "budget", "split", "hops", "sessions", "plain", "feedback", "poison", "feedback-budget", "trace"},
	"learning":  {"data", "budget", "seeds", "mix", "rounds", "conversations", "trace", "same-origin", "poison", "feedback-budget"},
	"replay":    {"trace", "feature-min", "feature-prior", "feature-z", "feature-power", "kind-half", "belief-power", "origin-power", "trust-share", "distrust-share", "kind-impact-min"},
	"knowledge": {"entities", "seeds", "queries", "budget"},
	"latency":   {"sizes", "budgets", "queries"},
	"load":      {"clients", "duration", "servers", "seed", "async-feedback", "feedback-only", "analyze"},
	"reflect":   {"data", "sizes", "feedback-events"},
	"users":     {"users", "per-user", "tenants", "per-tenant", "sample", "warm-rounds", "budget"},
	"router":    {"data"},
	"gate":      {"data"},
}

// measureApart gives a feedback benchmark the recall it measures with,
// the same recall without exploration or kind probes (a figure must not
// move with a memory held back at random), and the seeding of the judged
// recalls' exploration, so that a run's figures repeat.
func measureApart(svc *bench.Services, cfg configs.Config, db *store.DB, logger *slog.Logger, services *Services) error {
	measured := cfg
	measured.Learning.Explore, measured.Learning.ExploreKinds = 0, 0
	ms, err := NewServices(measured, db, logger)
	if err != nil {
		return err
	}
	svc.Measure, svc.SeedExplore = ms.Recall, services.Recall.SeedExplore
	return nil
}

// parseBenchFlags parses args with the flags of benchmark name: its
// --help shows those, and a flag of another benchmark is refused.
func parseBenchFlags(fs *flag.FlagSet, v verb, name string, args []string, stdout io.Writer) error {
	own := append([]string{"cpuprofile", "config"}, benchFlags[name]...)
	if name != "replay" { // replay reads a trace and a config: no store
		own = append(own, "keep")
	}
	shown := newFlags(v)
	fs.VisitAll(func(f *flag.Flag) {
		if slices.Contains(own, f.Name) {
			shown.Var(f.Value, f.Name, f.Usage)
		}
	})
	positional, err := parse(shown, v, args, stdout)
	if err != nil {
		return err
	}
	return noArgs(v, positional)
}

// benchReplay runs engram bench replay: no store, only the trace, under
// the config's scoring and feedback sections.
func benchReplay(path string, policy learning.Policy, scoring learning.ScoreConfig, fbc engram.FeedbackConfig, stdout io.Writer) error {
	if path == "" {
		return errors.New("bench replay: --trace FILE (written by engram bench learning --trace) is required")
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("bench replay: %w", err)
	}
	defer f.Close()
	runs, err := bench.Replay(f, policy, scoring, fbc)
	if err != nil {
		return err
	}
	bench.PrintReplay(stdout, runs, policy)
	return nil
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bench: %q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// coldIndex lets the latency benchmark time a cold tenant's index.
type coldIndex struct{ ix *index.Index }

func (c coldIndex) LoadCold(ctx context.Context, fromSnapshot bool) (int64, error) {
	st, err := c.ix.Load(ctx, fromSnapshot)
	return st.Bytes, err
}

func (c coldIndex) Snapshot(ctx context.Context) error { return c.ix.Snapshot(ctx) }

// benchKnowledge runs the knowledge benchmark once per seed, each on a
// new tenant, and asks every question of three recalls: the configured
// knowledge update, the update off (superseded factor 1), both without
// exploration so that no memory is held back at random.
func benchKnowledge(ctx context.Context, cfg configs.Config, db *store.DB, logger *slog.Logger, svc bench.Services,
	entities, queries, budget int, seeds string, stdout io.Writer) error {
	list, err := intList(seeds)
	if err != nil {
		return err
	}
	measured := cfg
	measured.Learning.Explore, measured.Learning.ExploreKinds = 0, 0
	on, err := NewServices(measured, db, logger)
	if err != nil {
		return err
	}
	measured.Scoring.SupersededFactor = 1
	off, err := NewServices(measured, db, logger)
	if err != nil {
		return err
	}
	for _, seed := range list {
		opt := bench.KnowledgeOptions{Entities: entities, Queries: queries, Seed: uint64(seed), Budget: budget}
		rs, err := bench.RunKnowledge(ctx, svc, opt, []engram.RecallService{on.Recall, off.Recall},
			[]string{fmt.Sprintf("knowledge update (superseded factor %g)", cfg.Scoring.SupersededFactor), "update off (factor 1)"}, os.Stderr)
		if err != nil {
			return err
		}
		bench.PrintKnowledge(stdout, opt, rs)
		fmt.Fprintln(stdout)
	}
	return nil
}
