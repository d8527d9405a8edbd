package web

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram"
)

type feedbackData struct {
	Items []*engram.FeedbackRecord
	Next  string
	// The filters as asked, for the form.
	Signal, Rater, Category, From, To, Q string
	Categories                           []string
	Filtered                             bool
	Error                                string
}

// feedbackPage is how many records the feedback page shows at once.
const feedbackPage = 50

// handleFeedback is the feedback stream as stories: what was asked, what
// was answered, the judgement and what it changed, filtered by signal,
// rater, category, day range and text.
func (c *Console) handleFeedback(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	p := c.newPage(r, s, "feedback")
	q := r.URL.Query()
	d := feedbackData{Signal: q.Get("signal"), Rater: strings.TrimSpace(q.Get("rater")), Category: q.Get("category"),
		From: q.Get("from"), To: q.Get("to"), Q: strings.TrimSpace(q.Get("q")), Categories: c.cfg.Categories}
	f := engram.FeedbackFilter{Limit: feedbackPage, Signal: d.Signal, Rater: d.Rater, Category: d.Category, Query: d.Q,
		MemoryID: q.Get("memory"), RecallID: q.Get("recall")}
	var bad error
	if v := q.Get("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			bad = engram.Errorf(engram.EINVALID, "before must be a positive number")
		}
		f.Before = n
	}
	day := func(v, name string) time.Time {
		if v == "" {
			return time.Time{}
		}
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			bad = engram.Errorf(engram.EINVALID, "%s must be a date (YYYY-MM-DD)", name)
		}
		return t
	}
	f.Since = day(d.From, "from")
	if t := day(d.To, "to"); !t.IsZero() {
		f.Until = t.Add(24 * time.Hour)
	}
	d.Filtered = f.MemoryID != "" || f.RecallID != "" || d.Signal != "" || d.Rater != "" || d.Category != "" || d.From != "" || d.To != "" || d.Q != ""
	status := http.StatusOK
	var items []*engram.FeedbackRecord
	err := bad
	if err == nil {
		items, err = c.cfg.Insights.FindFeedback(r.Context(), f)
	}
	switch {
	case engram.ErrorCode(err) == engram.EINVALID:
		status, d.Error = http.StatusBadRequest, engram.ErrorMessage(err)
	case err != nil:
		c.renderError(w, r, s, err)
		return
	}
	d.Items = items
	if len(items) == feedbackPage {
		next := r.URL.Query()
		next.Set("before", strconv.FormatInt(items[len(items)-1].Seq, 10))
		d.Next = "/console/feedback?" + next.Encode()
	}
	p.Data = d
	c.render(w, status, "feedback", p)
}

// pairPreview is how many lines of each format the pairs page shows.
const pairPreview = 5

type pairsData struct {
	Format  string
	Formats []string
	Lines   []string
	More    bool
	// Pairs are the previewed pairs' provenance (paired formats only).
	Pairs []*engram.Pair
}

func (c *Console) handlePairs(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	p := c.newPage(r, s, "pairs")
	format := r.URL.Query().Get("format")
	if format == "" {
		format = Formats[0]
	}
	if !slices.Contains(Formats, format) {
		c.renderError(w, r, s, engram.Errorf(engram.EINVALID, "format must be one of %s", strings.Join(Formats, ", ")))
		return
	}
	var buf bytes.Buffer
	n, err := c.export(r, &buf, format, pairPreview+1)
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	d := pairsData{Format: format, Formats: Formats, More: n > pairPreview}
	if format != "trl-unpaired" && c.cfg.Pairs != nil {
		if _, err := c.cfg.Pairs.EachPair(r.Context(), engram.PairFilter{Limit: pairPreview}, func(p *engram.Pair) error {
			d.Pairs = append(d.Pairs, p)
			return nil
		}); err != nil {
			c.renderError(w, r, s, err)
			return
		}
	}
	for i, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" || i >= pairPreview {
			continue
		}
		d.Lines = append(d.Lines, prettyJSON([]byte(line)))
	}
	p.Data = d
	c.render(w, http.StatusOK, "pairs", p)
}

// export writes up to limit records (0: all) of format and counts them.
func (c *Console) export(r *http.Request, w io.Writer, format string, limit int) (int, error) {
	if c.cfg.Export == nil {
		return 0, nil
	}
	return c.cfg.Export(r.Context(), w, format, limit)
}

func (c *Console) handleDownload(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	format := r.URL.Query().Get("format")
	if !slices.Contains(Formats, format) {
		c.renderError(w, r, s, engram.Errorf(engram.EINVALID, "format must be one of %s", strings.Join(Formats, ", ")))
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="engram-%s-%s.jsonl"`, s.Tenant, format))
	w.Header().Set("Cache-Control", "no-store")
	if _, err := c.export(r, w, format, 0); err != nil {
		// The status is sent; the log has the reason and the file ends short.
		c.cfg.Logger.Error("console pair download", "format", format, "err", err)
	}
}
