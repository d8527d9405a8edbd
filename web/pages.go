package web

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram"
)

// overviewDays is how many days of feedback the overview charts.
const overviewDays = 14

type overviewData struct {
	Stats     *engram.TenantStats
	Layers    *chart
	Category  *chart
	Votes     *chart
	Rewards   *chart
	Feedback  int64
	HasMemory bool
}

func (c *Console) handleOverview(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	p := c.newPage(r, s, "overview")
	since := c.cfg.Now().UTC().Add(-(overviewDays - 1) * 24 * time.Hour)
	st, err := c.cfg.Insights.TenantStats(r.Context(), since)
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	d := overviewData{Stats: st, HasMemory: st.Live+st.Archived+st.Tombstoned > 0}
	d.Layers = hbars(p.T("chart.layers"), []string{p.T("layer.l2"), p.T("layer.l3")}, []int64{st.Live, st.Reflections})
	if len(st.Categories) > 0 {
		var labels []string
		var values []int64
		for _, cc := range st.Categories {
			labels = append(labels, cc.Category)
			values = append(values, cc.Count)
		}
		d.Category = hbars(p.T("chart.categories"), labels, values)
	}
	for _, day := range st.Days {
		d.Feedback += day.Up + day.Down
	}
	d.Votes = votesChart(p.T("chart.votes"), p.T("vote.up"), p.T("vote.down"), st.Days)
	d.Rewards = histogram(p.T("chart.rewards"), st.RewardBins)
	p.Data = d
	c.render(w, http.StatusOK, "overview", p)
}

type memoriesData struct {
	Q, Category, Tag, KeyPrefix string
	NeedsRevision               bool
	Categories                  []string
	Items                       []*engram.Memory
	Next                        string // URL of the next page, or ""
	Filtered                    bool
	Error                       string
}

func (c *Console) handleMemories(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	p := c.newPage(r, s, "memories")
	q := r.URL.Query()
	d := memoriesData{Q: strings.TrimSpace(q.Get("q")), Category: q.Get("category"), Tag: strings.TrimSpace(q.Get("tag")),
		KeyPrefix: strings.TrimSpace(q.Get("key_prefix")), NeedsRevision: q.Get("needs_revision") == "true",
		Categories: c.cfg.Categories}
	f := engram.MemoryFilter{Limit: 25, Cursor: q.Get("cursor")}
	if d.Q != "" {
		f.Query = &d.Q
	}
	if d.Category != "" {
		f.Category = &d.Category
	}
	if d.Tag != "" {
		f.Tag = &d.Tag
	}
	if d.KeyPrefix != "" {
		f.KeyPrefix = &d.KeyPrefix
	}
	if d.NeedsRevision {
		f.NeedsRevision = &d.NeedsRevision
	}
	d.Filtered = f.Query != nil || f.Category != nil || f.Tag != nil || f.KeyPrefix != nil || f.NeedsRevision != nil
	page, err := c.cfg.Memories.FindMemories(r.Context(), f)
	status := http.StatusOK
	switch {
	case engram.ErrorCode(err) == engram.EINVALID:
		status, d.Error = http.StatusBadRequest, engram.ErrorMessage(err)
	case err != nil:
		c.renderError(w, r, s, err)
		return
	default:
		d.Items = page.Items
		if page.NextCursor != "" {
			next := r.URL.Query()
			next.Set("cursor", page.NextCursor)
			d.Next = "/console/memories?" + next.Encode()
		}
	}
	p.Data = d
	c.render(w, status, "memories", p)
}

// change is one field an event changed, for the history table.
type change struct {
	Field, Before, After string
}

type eventView struct {
	*engram.MemoryEvent
	Changes []change
}

type memoryData struct {
	M         *engram.Memory
	Score     *engram.ScoreBreakdown
	Events    []eventView
	CitedBy   []*engram.Reflection
	From      string // the reflection the visitor came from
	Rolled    string
	HasData   bool
	HasSource bool
}

func (c *Console) handleMemory(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	p := c.newPage(r, s, "memories")
	ctx := r.Context()
	m, err := c.cfg.Memories.FindMemoryByID(ctx, r.PathValue("id"))
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	events, err := c.cfg.Memories.FindMemoryEvents(ctx, m.ID)
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	cited, err := c.cfg.Insights.FindReflectionsCiting(ctx, m.ID)
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	d := memoryData{M: m, CitedBy: cited, Rolled: r.URL.Query().Get("rolled"),
		HasData: len(m.Data) > 0 && string(m.Data) != "null", HasSource: len(m.Source) > 0 && string(m.Source) != "null"}
	if from := r.URL.Query().Get("from"); plainID.MatchString(from) {
		d.From = from
	}
	if c.cfg.Scorer != nil {
		b := c.cfg.Scorer.Score(m, 1)
		d.Score = &b
	}
	for i := len(events) - 1; i >= 0; i-- {
		d.Events = append(d.Events, eventView{MemoryEvent: events[i], Changes: diff(events[i].Before, events[i].After)})
	}
	p.Title = clip(firstLine(m.Content), 60)
	p.Data = d
	c.render(w, http.StatusOK, "memory", p)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// diff lists the fields an event changed that a person reads.
func diff(before, after *engram.Memory) []change {
	if after == nil {
		return nil
	}
	created := before == nil
	if created {
		before = &engram.Memory{}
	}
	var out []change
	add := func(field, b, a string) {
		if a != b {
			out = append(out, change{Field: field, Before: clip(b, 200), After: clip(a, 200)})
		}
	}
	if created {
		add("content", "", after.Content)
		add("summary", "", after.Summary)
		add("category", "", after.Category)
		add("tags", "", strings.Join(after.Tags, ", "))
		add("data", "", string(after.Data))
		return out
	}
	add("content", before.Content, after.Content)
	add("summary", before.Summary, after.Summary)
	add("category", before.Category, after.Category)
	add("tags", strings.Join(before.Tags, ", "), strings.Join(after.Tags, ", "))
	add("data", string(before.Data), string(after.Data))
	add("valid", strconv.FormatBool(before.Valid), strconv.FormatBool(after.Valid))
	add("reward", fmt.Sprintf("%.3f", before.Reward), fmt.Sprintf("%.3f", after.Reward))
	add("confidence", fmt.Sprintf("%.3f", before.Confidence), fmt.Sprintf("%.3f", after.Confidence))
	add("votes", fmt.Sprintf("↑%d ↓%d", before.UpCount, before.DownCount), fmt.Sprintf("↑%d ↓%d", after.UpCount, after.DownCount))
	add("needs_revision", strconv.FormatBool(before.NeedsRevision), strconv.FormatBool(after.NeedsRevision))
	return out
}

// handleRollback restores a version, only if nobody changed the memory
// since the page was drawn (the form carries the version it showed).
func (c *Console) handleRollback(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	id := r.PathValue("id")
	version, err := strconv.ParseInt(r.PostFormValue("version"), 10, 64)
	if err != nil || version < 1 {
		c.renderError(w, r, s, engram.Errorf(engram.EINVALID, "version must be a positive number"))
		return
	}
	var expect *int64
	if cur, err := strconv.ParseInt(r.PostFormValue("current"), 10, 64); err == nil {
		expect = &cur
	}
	m, err := c.cfg.Memories.RollbackMemory(r.Context(), id, version, expect)
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/console/memories/%s?rolled=%d", m.ID, version), http.StatusSeeOther)
}

type reflectionsData struct {
	Category   string
	Categories []string
	Items      []*engram.Reflection
	Next       string
}

func (c *Console) handleReflections(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	p := c.newPage(r, s, "reflections")
	if c.cfg.Reflections == nil {
		p.Data = reflectionsData{Categories: c.cfg.Categories}
		c.render(w, http.StatusOK, "reflections", p)
		return
	}
	q := r.URL.Query()
	d := reflectionsData{Category: q.Get("category"), Categories: c.cfg.Categories}
	f := engram.ReflectionFilter{Limit: 50, Cursor: q.Get("cursor")}
	if d.Category != "" {
		f.Category = &d.Category
	}
	pg, err := c.cfg.Reflections.FindReflections(r.Context(), f)
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	d.Items = pg.Items
	if pg.NextCursor != "" {
		next := r.URL.Query()
		next.Set("cursor", pg.NextCursor)
		d.Next = "/console/reflections?" + next.Encode()
	}
	p.Data = d
	c.render(w, http.StatusOK, "reflections", p)
}

type reflectionData struct {
	R        *engram.Reflection
	HTML     any
	Versions []*engram.Reflection
	Current  int64
}

func (c *Console) handleReflection(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	p := c.newPage(r, s, "reflections")
	if c.cfg.Reflections == nil {
		c.renderError(w, r, s, engram.Errorf(engram.ENOTFOUND, "reflections are not enabled"))
		return
	}
	ctx := r.Context()
	cur, err := c.cfg.Reflections.FindReflectionByID(ctx, r.PathValue("id"))
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	versions, err := c.cfg.Reflections.FindReflectionVersions(ctx, cur.ID)
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	shown := cur
	if v := r.URL.Query().Get("version"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		i := slices.IndexFunc(versions, func(x *engram.Reflection) bool { return x.Version == n })
		if err != nil || i < 0 {
			c.renderError(w, r, s, engram.Errorf(engram.ENOTFOUND, "reflection %s has no version %s", cur.ID, v))
			return
		}
		shown = versions[i]
	}
	html := shown.HTML
	if html == "" && c.cfg.Markdown != nil {
		if html, err = c.cfg.Markdown(shown.Markdown); err != nil {
			c.renderError(w, r, s, err)
			return
		}
	}
	slices.Reverse(versions)
	p.Title = shown.Title
	// The HTML comes from goldmark with raw HTML omitted and unsafe link
	// schemes dropped (see Config.Markdown), so it is trusted here; the
	// citation links get the reflection's id, for the way back.
	p.Data = reflectionData{R: shown, HTML: trustedHTML(citeBack(html, cur.ID)), Versions: versions, Current: cur.Version}
	c.render(w, http.StatusOK, "reflection", p)
}

// citeLink is a citation in a rendered reflection.
var citeLink = regexp.MustCompile(`href="/console/memories/([A-Za-z0-9_-]+)"`)

// plainID is what a memory or reflection id looks like.
var plainID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// citeBack makes each citation link say which reflection it came from, so
// the memory page can link back to it.
func citeBack(html, reflectionID string) string {
	if !plainID.MatchString(reflectionID) {
		return html
	}
	return citeLink.ReplaceAllString(html, `href="/console/memories/${1}?from=`+reflectionID+`"`)
}

type feedbackData struct {
	Items []*engram.FeedbackRecord
	Next  string
}

func (c *Console) handleFeedback(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	p := c.newPage(r, s, "feedback")
	var before int64
	if v := r.URL.Query().Get("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			c.renderError(w, r, s, engram.Errorf(engram.EINVALID, "before must be a positive number"))
			return
		}
		before = n
	}
	const limit = 50
	items, err := c.cfg.Insights.FindFeedback(r.Context(), before, limit)
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	d := feedbackData{Items: items}
	if len(items) == limit {
		d.Next = fmt.Sprintf("/console/feedback?before=%d", items[len(items)-1].Seq)
	}
	p.Data = d
	c.render(w, http.StatusOK, "feedback", p)
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
func (c *Console) export(r *http.Request, w interface{ Write([]byte) (int, error) }, format string, limit int) (int, error) {
	if c.cfg.Export == nil || c.cfg.Pairs == nil {
		return 0, nil
	}
	enc, paired, err := c.cfg.Export(w, format)
	if err != nil {
		return 0, err
	}
	n := 0
	f := engram.PairFilter{Limit: limit}
	if paired {
		_, err = c.cfg.Pairs.EachPair(r.Context(), f, func(p *engram.Pair) error { n++; return enc.Pair(p) })
	} else {
		_, err = c.cfg.Pairs.EachUnpaired(r.Context(), f, func(u *engram.Unpaired) error { n++; return enc.Unpaired(u) })
	}
	return n, err
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

type learningData struct {
	Since    time.Time
	Sections []movementSection
	// Raters are those whose weight fell below a fresh rater's; nil
	// when the console has no rater reputations to read.
	Raters []raterView
	// ShowRaters is whether the raters section is shown at all.
	ShowRaters bool
}

type movementSection struct {
	Kind  string // "promoted" or "demoted"
	Items []movementView
}

// movementView is a moved memory with what the recalls that injected it
// taught: its helpfulness factor, evidence and impact (nil when unknown).
type movementView struct {
	*engram.MemoryMovement
	Impact *engram.Impact
}

// raterView is a rater with the weight its reputation earns.
type raterView struct {
	*engram.RaterReputation
	Weight float64
}

// learningRaters is how many raters the learning page reads; those whose
// weight fell are listed among them.
const learningRaters = 50

func (c *Console) handleLearning(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	p := c.newPage(r, s, "learning")
	ctx := r.Context()
	since := c.cfg.Now().UTC().Add(-7 * 24 * time.Hour)
	up, down, err := c.cfg.Insights.MemoryMovements(ctx, since, 20)
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	d := learningData{Since: since}
	for _, sec := range []struct {
		kind  string
		items []*engram.MemoryMovement
	}{{"promoted", up}, {"demoted", down}} {
		ms := movementSection{Kind: sec.kind, Items: make([]movementView, len(sec.items))}
		for i, m := range sec.items {
			ms.Items[i].MemoryMovement = m
			if c.cfg.Impacts == nil {
				continue
			}
			im, err := c.cfg.Impacts.Impact(ctx, m.Memory.ID)
			switch {
			case engram.ErrorCode(err) == engram.ENOTFOUND: // deleted since the feedback
			case err != nil:
				c.renderError(w, r, s, err)
				return
			default:
				ms.Items[i].Impact = im
			}
		}
		d.Sections = append(d.Sections, ms)
	}
	if c.cfg.Raters != nil && c.cfg.Impacts != nil {
		d.ShowRaters = true
		reps, err := c.cfg.Raters.FindReputations(ctx, learningRaters)
		if err != nil {
			c.renderError(w, r, s, err)
			return
		}
		fresh := c.cfg.Impacts.RaterWeight(engram.Reputation{})
		for _, rep := range reps {
			if wt := c.cfg.Impacts.RaterWeight(rep.Reputation); wt < fresh-1e-9 {
				d.Raters = append(d.Raters, raterView{RaterReputation: rep, Weight: wt})
			}
		}
	}
	p.Data = d
	c.render(w, http.StatusOK, "learning", p)
}

type playgroundData struct {
	Query     string
	Budget    int
	MaxBudget int
	Result    *engram.Recall
	Meter     *chart
	Error     string
}

func (c *Console) handlePlayground(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	p := c.newPage(r, s, "playground")
	d := playgroundData{Budget: 500, MaxBudget: c.cfg.MaxBudget}
	status := http.StatusOK
	if r.Method == http.MethodPost {
		d.Query = strings.TrimSpace(r.PostFormValue("query"))
		budget, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue("budget")))
		switch {
		case c.cfg.Recall == nil:
			status, d.Error = http.StatusNotFound, "recall is not enabled"
		case err != nil:
			status, d.Error = http.StatusBadRequest, p.T("playground.badbudget")
		default:
			d.Budget = budget
			rec, err := c.cfg.Recall.Recall(r.Context(), engram.RecallRequest{Query: d.Query, TokenBudget: budget})
			if err != nil {
				if engram.ErrorCode(err) != engram.EINVALID {
					c.renderError(w, r, s, err)
					return
				}
				status, d.Error = http.StatusBadRequest, engram.ErrorMessage(err)
				break
			}
			d.Result = rec
			d.Meter = meter(p.T("playground.total"), rec.TokensUsed, rec.TokenBudget)
		}
	}
	p.Data = d
	c.render(w, status, "playground", p)
}
