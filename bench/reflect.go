package bench

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/engram-memory/engram"
)

// ReflectOptions sizes `engram bench reflect`.
type ReflectOptions struct {
	LoCoMo   string // locomo10.json; "" skips the LoCoMo part
	Sizes    []int  // generated tenants whose reflect and sleep are timed
	Feedback int    // feedback events on one tenant for the event-log part; 0 skips it
	Seed     uint64
}

// ReflectRow is one tenant's measurement.
type ReflectRow struct {
	Tenant           string
	Memories         int
	Groups, Written  int
	ReflectSecs      float64
	Citations        int // citation links checked against the group's members
	BadCitations     int
	UnsafeHTML       int     // reflections whose HTML kept a <script or <img
	SecondWritten    int     // reflections written by a second reflect: 0
	SleepSecs        float64 // the first sleep (0 when not run)
	SleepChanged     bool    // whether a second sleep changed anything: false
	Merged           int
	EventsFolded     int64
	EventBytesBefore int64
	EventBytesAfter  int64
}

var benchCitation = regexp.MustCompile(`\[(mem_[a-z2-7]+)@\d+\]\(/console/memories/(mem_[a-z2-7]+)\)`)

// RunReflect measures the reflector and the sleep cycle: on the LoCoMo
// conversations with some feedback (every group written, every citation a
// member, HTML safe, a second reflect and a second sleep change nothing),
// on generated tenants of each size (time), and on a tenant with many
// feedback events (the event log before and after folding). svc.Sleep
// must fold events at once (sleep.compact_after set tiny by the caller).
func RunReflect(ctx context.Context, svc Services, opt ReflectOptions, progress io.Writer) ([]ReflectRow, error) {
	var rows []ReflectRow
	if opt.LoCoMo != "" {
		convs, err := loadLoCoMo(opt.LoCoMo)
		if err != nil {
			return nil, err
		}
		for _, conv := range convs {
			tctx, err := tenantCtx(ctx, svc.Auth, "reflect-"+strings.ToLower(conv.SampleID))
			if err != nil {
				return nil, err
			}
			byMemory, err := ingestConversation(tctx, svc, conv, false)
			if err != nil {
				return nil, err
			}
			// Some feedback: the first 30 questions asked at 400 tokens and
			// thumbed by whether an evidence turn was injected.
			rep := newReport()
			for i, q := range rep.questions(conv, byMemory) {
				if i == 30 {
					break
				}
				rec, err := svc.Recall.Recall(tctx, engram.RecallRequest{Query: q.text, TokenBudget: 400})
				if err != nil {
					return nil, err
				}
				thumb := engram.ThumbDown
				for _, it := range rec.Items {
					if q.gold[byMemory[it.ID]] {
						thumb = engram.ThumbUp
					}
				}
				if _, err := svc.Feedback.SubmitFeedback(tctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: thumb, Rater: fmt.Sprint("q", i)}); err != nil {
					return nil, err
				}
			}
			row, err := reflectTenant(tctx, svc, "locomo "+conv.SampleID, len(byMemory), true)
			if err != nil {
				return nil, err
			}
			rows = append(rows, row)
			if progress != nil {
				fmt.Fprintf(progress, "  %s: %d groups\n", conv.SampleID, row.Groups)
			}
		}
	}
	for _, size := range opt.Sizes {
		tctx, err := tenantCtx(ctx, svc.Auth, fmt.Sprintf("reflect-%d", size))
		if err != nil {
			return nil, err
		}
		gen := newCorpus(opt.Seed + uint64(size))
		for done := 0; done < size; done += 500 {
			ms := make([]*engram.Memory, min(500, size-done))
			for i := range ms {
				ms[i] = gen.memory()
			}
			if _, err := svc.Memories.CreateMemories(tctx, ms); err != nil {
				return nil, err
			}
		}
		row, err := reflectTenant(tctx, svc, fmt.Sprintf("generated %d", size), size, true)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if opt.Feedback > 0 {
		tctx, err := tenantCtx(ctx, svc.Auth, "reflect-feedback")
		if err != nil {
			return nil, err
		}
		gen := newCorpus(opt.Seed)
		// Up to 500 memories, at least four events each.
		memories := min(500, max(1, opt.Feedback/4))
		ms := make([]*engram.Memory, memories)
		for i := range ms {
			ms[i] = gen.memory()
		}
		res, err := svc.Memories.CreateMemories(tctx, ms)
		if err != nil {
			return nil, err
		}
		for i := 0; i < opt.Feedback; i++ {
			// One rater per memory and round: the per-rater cap never bites.
			m := res[i%memories].Memory
			thumb := []string{engram.ThumbUp, engram.ThumbDown}[i%3%2]
			if _, err := svc.Feedback.SubmitFeedback(tctx, engram.FeedbackInput{MemoryID: m.ID, Thumb: thumb,
				Rater: fmt.Sprint("r", i/memories)}); err != nil {
				return nil, err
			}
		}
		row, err := reflectTenant(tctx, svc, fmt.Sprintf("%d feedback events", opt.Feedback), memories, true)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// reflectTenant reflects the tenant in ctx twice, checks every
// reflection, then sleeps twice.
func reflectTenant(ctx context.Context, svc Services, name string, memories int, sleep bool) (ReflectRow, error) {
	row := ReflectRow{Tenant: name, Memories: memories}
	start := time.Now()
	res, err := svc.Reflections.Reflect(ctx, engram.ReflectRequest{})
	if err != nil {
		return row, err
	}
	row.ReflectSecs = time.Since(start).Seconds()
	row.Groups, row.Written = res.Groups, len(res.Written)
	for _, w := range res.Written {
		r, err := svc.Reflections.FindReflectionByID(ctx, w.ID)
		if err != nil {
			return row, err
		}
		members := map[string]bool{}
		for _, m := range r.Members {
			members[m.ID] = true
		}
		for _, c := range benchCitation.FindAllStringSubmatch(r.Markdown, -1) {
			row.Citations++
			if !members[c[1]] || c[1] != c[2] {
				row.BadCitations++
			}
		}
		if strings.Contains(r.HTML, "<script") || strings.Contains(r.HTML, "<img") {
			row.UnsafeHTML++
		}
	}
	again, err := svc.Reflections.Reflect(ctx, engram.ReflectRequest{})
	if err != nil {
		return row, err
	}
	row.SecondWritten = len(again.Written)
	if !sleep || svc.Sleep == nil {
		return row, nil
	}
	start = time.Now()
	first, err := svc.Sleep.Sleep(ctx)
	if err != nil {
		return row, err
	}
	row.SleepSecs = time.Since(start).Seconds()
	row.EventsFolded, row.EventBytesBefore, row.EventBytesAfter = first.EventsFolded, first.EventBytesBefore, first.EventBytesAfter
	row.Merged = first.Merged
	second, err := svc.Sleep.Sleep(ctx)
	if err != nil {
		return row, err
	}
	row.SleepChanged = second.Changed()
	return row, nil
}

// PrintReflect writes the rows as a Markdown table.
func PrintReflect(w io.Writer, rows []ReflectRow) {
	var out [][]string
	for _, r := range rows {
		perK := 0.0
		if r.Memories > 0 {
			perK = r.ReflectSecs / float64(r.Memories) * 1000
		}
		out = append(out, []string{r.Tenant, fmt.Sprint(r.Memories), fmt.Sprint(r.Groups), fmt.Sprint(r.Written),
			fmt.Sprintf("%.2f", r.ReflectSecs), fmt.Sprintf("%.3f", perK), fmt.Sprintf("%d/%d", r.Citations-r.BadCitations, r.Citations),
			fmt.Sprint(r.UnsafeHTML), fmt.Sprint(r.SecondWritten), fmt.Sprintf("%.2f", r.SleepSecs), fmt.Sprint(r.Merged), fmt.Sprint(r.SleepChanged),
			fmt.Sprint(r.EventsFolded), fmt.Sprintf("%.1f → %.1f", float64(r.EventBytesBefore)/1e6, float64(r.EventBytesAfter)/1e6)})
	}
	table(w, []string{"tenant", "memories", "groups", "written", "reflect s", "s per 1k", "citations ok", "unsafe html",
		"2nd reflect wrote", "sleep s", "merged", "2nd sleep changed", "events folded", "event log MB"}, out)
}
