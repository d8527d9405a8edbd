package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram"
)

// locomoConversation is the part of a LoCoMo sample the harness reads.
type locomoConversation struct {
	SampleID     string                     `json:"sample_id"`
	QA           []locomoQA                 `json:"qa"`
	Conversation map[string]json.RawMessage `json:"conversation"`
}

type locomoQA struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

type locomoTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

var (
	sessionKey  = regexp.MustCompile(`^session_(\d+)$`)
	evidenceRef = regexp.MustCompile(`D\s*:?\s*(\d+)\s*:\s*(\d+)`)
)

// LoCoMoOptions tunes the LoCoMo run.
type LoCoMoOptions struct {
	Path   string
	Budget int // token budget of every recall; large, so ranking is measured, not packing
	// Plain feeds each turn as the BM25 baseline's row only (see
	// ingestConversation); false feeds the richer default input.
	Plain bool
	// Sessions posts the turns as session messages instead (see
	// ingestSessions), as a chat product using working memory would.
	Sessions bool
	// Split chooses the conversations: SplitTuning (0–4), SplitHeldOut
	// (5–9) or "" for all.
	Split string
	// Trace, when set, gets one JSON line per question asked (see
	// injectTrace).
	Trace io.Writer
	// Hops is every recall's RecallRequest.Hops (nil: the default).
	Hops *int
}

// LoCoMoResult holds the retrieval metrics of one category (or all).
type LoCoMoResult struct {
	N                 int
	Recall            map[int]float64 // evidence recall@k
	Hit               map[int]float64 // at least one evidence turn in the top k
	MRR               float64         // MRR@20
	LatencyMS         []float64
	recallSum, hitSum map[int]float64
	mrrSum            float64
}

// Ks are the cut-offs reported.
var Ks = []int{1, 5, 10, 20}

func newResult() *LoCoMoResult {
	return &LoCoMoResult{recallSum: map[int]float64{}, hitSum: map[int]float64{}}
}

func (r *LoCoMoResult) add(ranked []string, gold map[string]bool, ms float64) {
	r.N++
	r.LatencyMS = append(r.LatencyMS, ms)
	for _, k := range Ks {
		found := 0
		for _, id := range ranked[:min(k, len(ranked))] {
			if gold[id] {
				found++
			}
		}
		r.recallSum[k] += float64(found) / float64(len(gold))
		if found > 0 {
			r.hitSum[k]++
		}
	}
	for i, id := range ranked[:min(20, len(ranked))] {
		if gold[id] {
			r.mrrSum += 1 / float64(i+1)
			break
		}
	}
}

func (r *LoCoMoResult) finish() {
	r.Recall, r.Hit = map[int]float64{}, map[int]float64{}
	for _, k := range Ks {
		r.Recall[k] = r.recallSum[k] / float64(r.N)
		r.Hit[k] = r.hitSum[k] / float64(r.N)
	}
	r.MRR = r.mrrSum / float64(r.N)
}

// LoCoMoReport is the outcome of a run.
type LoCoMoReport struct {
	// Plain is the input the turns were stored with: true for the
	// baseline's rows only, false for the default (see ingestConversation).
	Plain       bool
	Sessions    bool // the turns were posted as session messages
	Overall     *LoCoMoResult
	ByCategory  map[int]*LoCoMoResult
	Turns       int
	Questions   int
	IngestSecs  float64
	Unmatched   int
	Unparseable int
	// Split names the conversations asked ("" for all).
	Split  string
	Budget int // token budget of every recall
	// Inject is what the recalls injected (with the relevance cut) and
	// Fill what they injected asked to fill the budget; Unanswerable and
	// UnanswerableFill the same for the questions nothing answers.
	Inject, Fill, Unanswerable, UnanswerableFill InjectResult
}

// locomoQuestion is a scored question with its gold evidence turns.
type locomoQuestion struct {
	text     string
	category int
	gold     map[string]bool
}

// loadLoCoMo reads the data set.
func loadLoCoMo(path string) ([]locomoConversation, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var convs []locomoConversation
	if err := json.Unmarshal(raw, &convs); err != nil {
		return nil, fmt.Errorf("locomo: %w", err)
	}
	return convs, nil
}

// questions returns the category 1–4 questions with evidence that names
// stored turns, normalising evidence ids as BASELINE.md does.
func (rep *LoCoMoReport) questions(conv locomoConversation, byMemory map[string]string) []locomoQuestion {
	turnIDs := map[string]bool{}
	for _, d := range byMemory {
		turnIDs[d] = true
	}
	var out []locomoQuestion
	for _, qa := range conv.QA {
		if qa.Category < 1 || qa.Category > 4 {
			continue
		}
		gold := map[string]bool{}
		for _, ev := range qa.Evidence {
			refs := evidenceRef.FindAllStringSubmatch(ev, -1)
			if refs == nil {
				rep.Unparseable++
			}
			for _, m := range refs {
				s, _ := strconv.Atoi(m[1])
				t, _ := strconv.Atoi(m[2])
				id := fmt.Sprintf("D%d:%d", s, t)
				if turnIDs[id] {
					gold[id] = true
				} else {
					rep.Unmatched++
				}
			}
		}
		if len(gold) > 0 {
			out = append(out, locomoQuestion{text: qa.Question, category: qa.Category, gold: gold})
		}
	}
	return out
}

// ask recalls q and returns the dia_ids ranked by score, the recall and
// its latency in milliseconds (see askRequest).
func ask(ctx context.Context, svc Services, q string, budget int, byMemory map[string]string) ([]string, *engram.Recall, float64, error) {
	return askRequest(ctx, svc, engram.RecallRequest{Query: q, TokenBudget: budget}, byMemory)
}

// rank is ask for a ranking rather than a context: the recall fills the
// budget, so the ranking holds every candidate that fits it, not only the
// first ten past the relevance cut (the learning benchmark strikes the
// misleading memories out of it before it counts the first ten).
func rank(ctx context.Context, svc Services, q string, budget int, byMemory map[string]string) ([]string, *engram.Recall, float64, error) {
	return askRequest(ctx, svc, engram.RecallRequest{Query: q, TokenBudget: budget, Fill: true}, byMemory)
}

// askRequest recalls req and returns the dia_ids of its candidates ranked
// by score, the recall and its latency in milliseconds. The ranking is of
// what was injected and what was left out together: the relevance cut
// decides how many go in, not how they rank, and the best ten left out
// (Recall.LeftOut) hold every candidate the injected ones do not that can
// reach the first ten, so recall@10 and better are those of the whole
// ranking.
func askRequest(ctx context.Context, svc Services, req engram.RecallRequest, byMemory map[string]string) ([]string, *engram.Recall, float64, error) {
	start := time.Now()
	rec, err := svc.Recall.Recall(ctx, req)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("recall %q: %w", req.Query, err)
	}
	ms := float64(time.Since(start).Microseconds()) / 1000
	items := append(append([]engram.RecallItem(nil), rec.Items...), rec.LeftOut...)
	sort.SliceStable(items, func(i, j int) bool { return items[i].Score > items[j].Score })
	ranked := make([]string, len(items))
	for i, it := range items {
		ranked[i] = byMemory[it.ID]
	}
	return ranked, rec, ms, nil
}

func (rep *LoCoMoReport) record(q locomoQuestion, ranked []string, ms float64) {
	rep.Overall.add(ranked, q.gold, ms)
	if rep.ByCategory[q.category] == nil {
		rep.ByCategory[q.category] = newResult()
	}
	rep.ByCategory[q.category].add(ranked, q.gold, ms)
	rep.Questions++
}

func (rep *LoCoMoReport) finish() {
	for _, r := range []*InjectResult{&rep.Inject, &rep.Fill, &rep.Unanswerable, &rep.UnanswerableFill} {
		r.finish()
	}
	rep.Overall.finish()
	for _, r := range rep.ByCategory {
		r.finish()
	}
}

func newReport() *LoCoMoReport {
	return &LoCoMoReport{Overall: newResult(), ByCategory: map[int]*LoCoMoResult{}}
}

// RunLoCoMo stores every dialog turn of every conversation as a memory
// (one tenant per conversation), then asks every category 1–4 question
// that has evidence as a recall, and measures where the evidence turns
// rank. Scoring follows ../shared/bench/locomo/BASELINE.md exactly
// (macro-averaged evidence recall@k, hit@k, MRR@20; evidence ids
// normalised the same way), so the figures compare with its BM25 row.
// opt.Plain chooses what each turn is stored with (see
// ingestConversation): with it the input is the baseline's too.
func RunLoCoMo(ctx context.Context, svc Services, opt LoCoMoOptions) (*LoCoMoReport, error) {
	convs, err := loadLoCoMo(opt.Path)
	if err != nil {
		return nil, err
	}
	if convs, err = splitConversations(convs, opt.Split); err != nil {
		return nil, err
	}
	unans, err := unanswerable()
	if err != nil {
		return nil, err
	}
	rep := newReport()
	rep.Plain, rep.Sessions, rep.Split, rep.Budget = opt.Plain, opt.Sessions, opt.Split, opt.Budget
	for _, conv := range convs {
		tctx, byMemory, err := rep.ingest(ctx, svc, conv, "locomo-")
		if err != nil {
			return nil, err
		}
		if svc.Settle != nil {
			if err := svc.Settle(ctx); err != nil {
				return nil, err
			}
		}
		for _, q := range rep.questions(conv, byMemory) {
			ranked, rec, ms, err := askRequest(tctx, svc, engram.RecallRequest{Query: q.text, TokenBudget: opt.Budget, Hops: opt.Hops}, byMemory)
			if err != nil {
				return nil, err
			}
			rep.record(q, ranked, ms)
			rep.Inject.add(rec, q.gold, byMemory)
			_, fill, _, err := askRequest(tctx, svc, engram.RecallRequest{Query: q.text, TokenBudget: opt.Budget, Fill: true, Hops: opt.Hops}, byMemory)
			if err != nil {
				return nil, err
			}
			rep.Fill.add(fill, q.gold, byMemory)
			if err := traceInjection(tctx, svc, opt.Trace, conv.SampleID, q.text, q.gold, byMemory); err != nil {
				return nil, err
			}
		}
		for _, q := range unans {
			if q.SampleID != conv.SampleID {
				continue
			}
			for _, f := range []struct {
				fill bool
				res  *InjectResult
			}{{false, &rep.Unanswerable}, {true, &rep.UnanswerableFill}} {
				_, rec, _, err := askRequest(tctx, svc, engram.RecallRequest{Query: q.Question, TokenBudget: opt.Budget, Fill: f.fill, Hops: opt.Hops}, byMemory)
				if err != nil {
					return nil, err
				}
				f.res.add(rec, nil, byMemory)
			}
			if err := traceInjection(tctx, svc, opt.Trace, conv.SampleID, q.Question, nil, byMemory); err != nil {
				return nil, err
			}
		}
	}
	rep.finish()
	return rep, nil
}

// ingest stores a conversation in a fresh tenant named prefix+sample id,
// with the input rep.Plain chooses.
func (rep *LoCoMoReport) ingest(ctx context.Context, svc Services, conv locomoConversation, prefix string) (context.Context, map[string]string, error) {
	tctx, err := tenantCtx(ctx, svc.Auth, prefix+strings.ToLower(conv.SampleID))
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	var byMemory map[string]string
	if rep.Sessions {
		byMemory, err = ingestSessions(tctx, svc, conv)
	} else {
		byMemory, err = ingestConversation(tctx, svc, conv, rep.Plain)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("locomo %s: %w", conv.SampleID, err)
	}
	rep.IngestSecs += time.Since(start).Seconds()
	rep.Turns += len(byMemory)
	return tctx, byMemory, nil
}

// locomoSource is the provenance of every stored turn.
var locomoSource = json.RawMessage(`{"kind":"bench","name":"locomo"}`)

// ingestConversation stores the turns and returns memory id → dia_id.
// In both modes a turn's content is "Speaker: text [shares caption]",
// exactly the body the BM25 baseline indexes (bm25_baseline.py's
// turn_body: no date, no session), its category is the top domain the
// router gives that text (the store requires one; recall ranks by it only
// as a route, not by its words), and its source names the benchmark (not
// searched).
//
//   - Default: the turn is also tagged with the speaker, has type
//     dialog_turn, carries the session number, date and dia_id as data,
//     and has the turn it replies to ("Speaker: text", the previous turn
//     of its session) as its context (searched at half weight, never
//     injected), as a chat product would store a reply.
//   - plain: nothing else. No tags, type, data or context, so the input
//     is the baseline's rows and only the retrieval differs.
func ingestConversation(ctx context.Context, svc Services, conv locomoConversation, plain bool) (map[string]string, error) {
	batch, dia, err := turnMemories(ctx, svc, conv, plain)
	if err != nil {
		return nil, err
	}
	return storeMemories(ctx, svc, batch, dia)
}

// locomoSession is one session of a LoCoMo conversation: its number, its
// date as the data writes it, and its turns.
type locomoSession struct {
	n     int
	date  string
	turns []locomoTurn
}

// locomoSessions returns conv's sessions in order.
func locomoSessions(conv locomoConversation) []locomoSession {
	var sessions []locomoSession
	for key, val := range conv.Conversation {
		m := sessionKey.FindStringSubmatch(key)
		if m == nil {
			continue
		}
		var turns []locomoTurn
		if json.Unmarshal(val, &turns) != nil {
			continue // a date or other non-list field
		}
		n, _ := strconv.Atoi(m[1])
		var date string
		_ = json.Unmarshal(conv.Conversation[key+"_date_time"], &date)
		sessions = append(sessions, locomoSession{n, date, turns})
	}
	sort.Slice(sessions, func(i, j int) bool { return sessions[i].n < sessions[j].n })
	return sessions
}

// turnMemories builds the memories of a conversation's turns, in
// conversation order, and their dia_ids (see ingestConversation).
func turnMemories(ctx context.Context, svc Services, conv locomoConversation, plain bool) ([]*engram.Memory, []string, error) {
	sessions := locomoSessions(conv)
	var batch []*engram.Memory
	var dia []string
	for _, s := range sessions {
		prev := ""
		for _, t := range s.turns {
			content := t.Speaker + ": " + t.Text
			if t.BlipCaption != "" {
				content += " [shares " + t.BlipCaption + "]"
			}
			route, err := svc.Router.RouteQuery(ctx, content)
			if err != nil {
				return nil, nil, err
			}
			m := &engram.Memory{Content: content, Category: route.Domains[0].Name, Source: locomoSource}
			if !plain {
				m.Data, _ = json.Marshal(map[string]any{"dia_id": t.DiaID, "session": s.n, "date": s.date})
				m.Tags, m.Type, m.Context = []string{t.Speaker}, "dialog_turn", prev
			}
			batch = append(batch, m)
			prev = t.Speaker + ": " + t.Text
			dia = append(dia, t.DiaID)
		}
	}
	return batch, dia, nil
}

// storeMemories stores batch in order and returns memory id → label
// (labels[i] names batch[i]).
func storeMemories(ctx context.Context, svc Services, batch []*engram.Memory, labels []string) (map[string]string, error) {
	byMemory := make(map[string]string, len(batch))
	for i := 0; i < len(batch); i += 100 {
		res, err := svc.Memories.CreateMemories(ctx, batch[i:min(i+100, len(batch))])
		if err != nil {
			return nil, err
		}
		for j, r := range res {
			byMemory[r.Memory.ID] = labels[i+j]
		}
	}
	return byMemory, nil
}

// The published baseline (../shared/bench/locomo/BASELINE.md, SQLite FTS5
// bm25 over the same rows, unicode61 tokenizer), for the comparison row.
var locomoBaseline = map[string][6]float64{ // R@1 R@5 R@10 R@20 hit@10 MRR@20
	"overall": {0.279, 0.497, 0.560, 0.628, 0.618, 0.414},
	"1":       {0.061, 0.181, 0.252, 0.344, 0.465, 0.255},
	"2":       {0.355, 0.611, 0.669, 0.721, 0.701, 0.490},
	"3":       {0.096, 0.227, 0.291, 0.318, 0.402, 0.211},
	"4":       {0.344, 0.589, 0.651, 0.722, 0.661, 0.460},
}

var categoryNames = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

// Print writes the report as Markdown tables.
func (rep *LoCoMoReport) Print(w io.Writer) {
	input := "turns with speaker tag, date and previous turn as context"
	if rep.Plain {
		input = "plain turns, the BM25 baseline's rows"
	}
	if rep.Sessions {
		input = "turns posted as session messages (speaker, content, at, message_id); engram builds the episodes"
	}
	fmt.Fprintf(w, "LoCoMo (input: %s): %d turns stored in %.1f s, %d questions (categories 1-4 with evidence); %d evidence ids unmatched, %d unparseable\n\n",
		input, rep.Turns, rep.IngestSecs, rep.Questions, rep.Unmatched, rep.Unparseable)
	header := []string{"category", "n", "R@1", "R@5", "R@10", "R@20", "hit@10", "MRR@20", "BM25 R@10", "p50 ms", "p95 ms"}
	row := func(name, key string, r *LoCoMoResult) []string {
		return []string{name, strconv.Itoa(r.N), f3(r.Recall[1]), f3(r.Recall[5]), f3(r.Recall[10]), f3(r.Recall[20]),
			f3(r.Hit[10]), f3(r.MRR), f3(locomoBaseline[key][2]),
			fmt.Sprintf("%.2f", percentile(r.LatencyMS, 50)), fmt.Sprintf("%.2f", percentile(r.LatencyMS, 95))}
	}
	rows := [][]string{row("**overall (1-4)**", "overall", rep.Overall)}
	for _, c := range []int{1, 2, 3, 4} {
		if r := rep.ByCategory[c]; r != nil {
			rows = append(rows, row(fmt.Sprintf("%d %s", c, categoryNames[c]), strconv.Itoa(c), r))
		}
	}
	table(w, header, rows)
	b := locomoBaseline["overall"]
	fmt.Fprintf(w, "\nBaseline (BASELINE.md, FTS5 bm25): R@1 %.3f  R@5 %.3f  R@10 %.3f  R@20 %.3f  hit@10 %.3f  MRR@20 %.3f\n",
		b[0], b[1], b[2], b[3], b[4], b[5])
	fmt.Fprintf(w, "Recall latency over all questions: p50 %.2f ms, p95 %.2f ms, p99 %.2f ms (in process, SQLite)\n",
		percentile(rep.Overall.LatencyMS, 50), percentile(rep.Overall.LatencyMS, 95), percentile(rep.Overall.LatencyMS, 99))
	if rep.Inject.N > 0 {
		rep.printInjection(w, rep.Budget)
	}
}
