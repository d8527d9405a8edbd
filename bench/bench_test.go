package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/index/indextest"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/reflections"
	"github.com/engram-memory/engram/router"
	"github.com/engram-memory/engram/sleep"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// services wires a fresh SQLite store the way cmd/engram does.
func services(tb testing.TB) (Services, *store.DB) {
	db := storetest.Open(tb, "sqlite")
	routes := router.NewService(router.New(router.DefaultConfig()), db, 0)
	rec := learning.NewRecaller(indextest.Wrap(db), routes, learning.NewScorer(learning.DefaultScoreConfig(), time.Now),
		storetest.Tokenizer(tb), engram.DefaultRecallConfig(), time.Now)
	return Services{Auth: db, Memories: db, Recall: rec, Router: routes}, db
}

func TestLatencyHarness(t *testing.T) {
	svc, db := services(t)
	rows, err := RunLatency(context.Background(), svc, db, LatencyOptions{Sizes: []int{300}, Budgets: []int{100, 400}, Queries: 20, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].MeanUsed > 100 || rows[1].MeanUsed > 400 || rows[1].MeanItems == 0 {
		t.Fatalf("rows %+v", rows)
	}
	var out bytes.Buffer
	PrintLatency(&out, rows)
	if !strings.Contains(out.String(), "| 300 | 400 |") {
		t.Fatalf("table:\n%s", out.String())
	}
}

// BenchmarkRecall measures one recall on a generated 10,000-memory tenant.
func BenchmarkRecall(b *testing.B) {
	svc, db := services(b)
	ctx := context.Background()
	if _, err := RunLatency(ctx, svc, db, LatencyOptions{Sizes: []int{10000}, Budgets: []int{500}, Queries: 1, Seed: 1}, nil); err != nil {
		b.Fatal(err)
	}
	tctx, _ := tenantCtx(ctx, svc.Auth, "latency-10000")
	gen := newCorpus(7)
	queries := make([]string, 64)
	for i := range queries {
		queries[i] = gen.words(4)
	}
	for _, budget := range []int{500, 2000} {
		b.Run(map[int]string{500: "budget500", 2000: "budget2000"}[budget], func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := svc.Recall.Recall(tctx, learningRequest(queries[i%len(queries)], budget)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func learningRequest(q string, budget int) engram.RecallRequest {
	return engram.RecallRequest{Query: q, TokenBudget: budget}
}

// locomoSample is a one-conversation LoCoMo file: two sessions (and a
// date with no session, as in conv-26), an image caption, and questions
// that are scored, skipped (category 5) or have odd evidence ids.
const locomoSample = `[{
 "sample_id": "conv-T",
 "conversation": {
  "speaker_a": "Ann", "speaker_b": "Bob",
  "session_1_date_time": "1:56 pm on 8 May, 2023",
  "session_1": [
   {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a greyhound called Comet."},
   {"speaker": "Bob", "dia_id": "D1:2", "text": "Lovely! Where from?"},
   {"speaker": "Ann", "dia_id": "D1:3", "text": "From the shelter downtown.", "blip_caption": "a photo of a dog on a sofa"}
  ],
  "session_2_date_time": "10:04 am on 2 June, 2023",
  "session_2": [
   {"speaker": "Bob", "dia_id": "D2:1", "text": "I started pottery classes on Tuesdays."},
   {"speaker": "Ann", "dia_id": "D2:2", "text": "Send me a picture of your first bowl."}
  ],
  "session_3_date_time": "9:00 am on 1 July, 2023"
 },
 "qa": [
  {"question": "What breed is Comet?", "evidence": ["D1:1"], "category": 4},
  {"question": "Which classes did Bob start?", "evidence": ["D:2:1", "D9:9"], "category": 2},
  {"question": "Where did Ann find the greyhound?", "evidence": ["D1:1; D1:3"], "category": 1},
  {"question": "What did Bob adopt?", "evidence": ["D1:1"], "category": 5},
  {"question": "Who has a cat?", "evidence": [], "category": 3}
 ]
}]`

// settledRecall fails its test when asked before Settle ran.
type settledRecall struct {
	engram.RecallService
	settled *int
	t       *testing.T
}

func (r settledRecall) Recall(ctx context.Context, req engram.RecallRequest) (*engram.Recall, error) {
	if *r.settled == 0 {
		r.t.Error("a question was asked before the background work settled")
	}
	return r.RecallService.Recall(ctx, req)
}

func TestLoCoMoHarness(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locomo.json")
	if err := os.WriteFile(path, []byte(locomoSample), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, plain := range []bool{false, true} {
		svc, _ := services(t)
		// The background work (the embeddings) settles after the
		// conversation is stored and before the first question.
		settled := 0
		svc.Settle = func(context.Context) error { settled++; return nil }
		svc.Recall = settledRecall{svc.Recall, &settled, t}
		rep, err := RunLoCoMo(ctx, svc, LoCoMoOptions{Path: path, Budget: 4000, Plain: plain})
		if err != nil {
			t.Fatal(err)
		}
		if settled != 1 {
			t.Fatalf("plain=%v: settled %d times for one conversation", plain, settled)
		}
		if rep.Plain != plain || rep.Turns != 5 || rep.Questions != 3 || rep.Unmatched != 1 || rep.Unparseable != 0 {
			t.Fatalf("plain=%v: report %+v", plain, rep)
		}
		if r := rep.ByCategory[4]; r == nil || r.N != 1 || r.Recall[1] != 1 {
			t.Fatalf("plain=%v: single-hop %+v", plain, r)
		}
		if rep.Inject.N != 3 || rep.Fill.N != 3 || rep.Fill.Items < rep.Inject.Items || rep.Fill.ContextRecall < rep.Inject.ContextRecall ||
			!(rep.Inject.TokensUsed > 0) || rep.Unanswerable.N != 0 {
			t.Fatalf("plain=%v: injected %+v, filled %+v, unanswerable %+v", plain, rep.Inject, rep.Fill, rep.Unanswerable)
		}
		var out bytes.Buffer
		rep.Print(&out)
		if want := map[bool]string{false: "previous turn as context", true: "plain turns"}[plain]; !strings.Contains(out.String(), want) ||
			!strings.Contains(out.String(), "| relevance cut |") || !strings.Contains(out.String(), "fill the budget") {
			t.Fatalf("plain=%v: table does not say %q or the injection figures:\n%s", plain, want, out.String())
		}
	}
	if _, err := RunLoCoMo(ctx, Services{}, LoCoMoOptions{Path: path, Budget: 4000, Split: "train"}); err == nil {
		t.Fatal("an unknown split was accepted")
	}
}

// TestLoCoMoSplits: the tuning split is conversations 0–4, the held-out
// one 5–9.
func TestLoCoMoSplits(t *testing.T) {
	convs := make([]locomoConversation, 10)
	for i := range convs {
		convs[i].SampleID = fmt.Sprint(i)
	}
	for split, want := range map[string][]string{SplitTuning: {"0", "1", "2", "3", "4"}, SplitHeldOut: {"5", "6", "7", "8", "9"}} {
		got, err := splitConversations(convs, split)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range got {
			ids = append(ids, c.SampleID)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("%s: %v, want %v", split, ids, want)
		}
	}
}

// TestLoCoMoInput checks what each mode stores for a turn: the baseline's
// row as content in both; speaker tag, data and previous turn as context
// only in the default.
func TestLoCoMoInput(t *testing.T) {
	var convs []locomoConversation
	if err := json.Unmarshal([]byte(locomoSample), &convs); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, plain := range []bool{false, true} {
		svc, _ := services(t)
		tctx, err := tenantCtx(ctx, svc.Auth, "input")
		if err != nil {
			t.Fatal(err)
		}
		byMemory, err := ingestConversation(tctx, svc, convs[0], plain)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for id, dia := range byMemory {
			if dia != "D1:3" {
				continue
			}
			found = true
			m, err := svc.Memories.FindMemoryByID(tctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if m.Content != "Ann: From the shelter downtown. [shares a photo of a dog on a sofa]" || m.Category == "" {
				t.Fatalf("plain=%v: content %q, category %q", plain, m.Content, m.Category)
			}
			rich := m.Context == "Bob: Lovely! Where from?" && slices.Equal(m.Tags, []string{"Ann"}) &&
				m.Type == "dialog_turn" && strings.Contains(string(m.Data), `"date":"1:56 pm on 8 May, 2023"`)
			bare := m.Context == "" && len(m.Tags) == 0 && m.Type == "" && len(m.Data) == 0
			if plain && !bare || !plain && !rich {
				t.Fatalf("plain=%v: context %q, tags %q, type %q, data %s", plain, m.Context, m.Tags, m.Type, m.Data)
			}
		}
		if !found {
			t.Fatalf("plain=%v: turn D1:3 not stored: %v", plain, byMemory)
		}
	}
}

func TestReflectHarness(t *testing.T) {
	svc, db := services(t)
	scorer := learning.NewScorer(learning.DefaultScoreConfig(), time.Now)
	svc.Feedback = learning.NewFeedback(db, scorer, engram.DefaultFeedbackConfig())
	refl := reflections.New(db, reflections.Config{Categories: engram.DefaultCategories, MinGroup: 3}, nil)
	svc.Reflections = refl
	svc.Sleep = sleep.New(db, refl, sleep.Config{MergeSimilarity: 0.9, ArchiveBelow: 0.02,
		CompactAfter: time.Nanosecond, Scoring: engram.DefaultScoringConfig()}, nil)
	rows, err := RunReflect(context.Background(), svc, ReflectOptions{Sizes: []int{120}, Feedback: 60, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if r.Written == 0 || r.Written != r.Groups || r.Citations == 0 || r.BadCitations != 0 || r.UnsafeHTML != 0 ||
			r.SecondWritten != 0 || r.SleepChanged {
			t.Errorf("%+v", r)
		}
	}
	if fb := rows[1]; fb.EventsFolded == 0 || fb.EventBytesAfter >= fb.EventBytesBefore {
		t.Errorf("feedback events not folded: %+v", fb)
	}
	var out bytes.Buffer
	PrintReflect(&out, rows)
	if !strings.Contains(out.String(), "| generated 120 | 120 |") {
		t.Errorf("table:\n%s", out.String())
	}
}

// countedRecall counts the recalls it answers.
type countedRecall struct {
	engram.RecallService
	n int
}

func (c *countedRecall) Recall(ctx context.Context, req engram.RecallRequest) (*engram.Recall, error) {
	c.n++
	return c.RecallService.Recall(ctx, req)
}

// TestFeedbackHarnessMeasuresApart: RunLoCoMoFeedback seeds the judged
// recalls' exploration with its seed (Services.SeedExplore) and asks the
// measured questions of Services.Measure, the recall without exploration,
// so that its figures repeat and do not move with a memory held back at
// random: of the sample's three scored questions, two are judged and one
// is measured before and after.
func TestFeedbackHarnessMeasuresApart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locomo.json")
	if err := os.WriteFile(path, []byte(locomoSample), 0o600); err != nil {
		t.Fatal(err)
	}
	svc, db := services(t)
	scorer := learning.NewScorer(learning.DefaultScoreConfig(), time.Now)
	svc.Feedback = learning.NewFeedback(db, scorer, engram.DefaultFeedbackConfig())
	judged, measured := &countedRecall{RecallService: svc.Recall}, &countedRecall{RecallService: svc.Recall}
	svc.Recall, svc.Measure = judged, measured
	var seeds []uint64
	svc.SeedExplore = func(seed uint64) { seeds = append(seeds, seed) }
	rep, err := RunLoCoMoFeedback(context.Background(), svc, FeedbackOptions{Path: path, FeedbackBudget: 400, EvalBudget: 4000, Seed: 7}, "t-")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seeds, []uint64{7}) || judged.n != rep.Thumbs || judged.n != 2 || measured.n != 2 {
		t.Errorf("seeds %v, judged recalls %d (thumbs %d), measured %d; want [7], 2 (2), 2", seeds, judged.n, rep.Thumbs, measured.n)
	}
}
