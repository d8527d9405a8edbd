package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/engram-memory/engram"
)

type memoriesData struct {
	Q, Category, Tag, KeyPrefix string
	NeedsRevision, Quarantined  bool
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
		Quarantined: q.Get("quarantined") == "true", Categories: c.cfg.Categories}
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
	if d.Quarantined {
		f.Quarantined = &d.Quarantined
	}
	d.Filtered = f.Query != nil || f.Category != nil || f.Tag != nil || f.KeyPrefix != nil || f.NeedsRevision != nil || f.Quarantined != nil
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
	// Feedback is the feedback whose credit made this version (feedback
	// events only; nil when it is no longer among the newest read).
	Feedback *engram.FeedbackRecord
}

// historyFeedback is how many of the newest feedback records naming a
// memory its history reads to say which one made each feedback version.
const historyFeedback = 200

type memoryData struct {
	M *engram.Memory
	// Score is the memory's score at full relevance with its learned
	// helpfulness, outside any recall (superseded 1: that is read among
	// a recall's candidates).
	Score    engram.ScoreBreakdown
	HasScore bool
	Events   []eventView
	CitedBy  []*engram.Reflection
	// Links are the memory's live links, both directions; Aliases its
	// key aliases (nil without Config.Links / Config.Aliases).
	Links     []*engram.Link
	Aliases   []*engram.Alias
	Emotion   float64 // engram.EmotionOf(M)
	From      string  // the reflection the visitor came from
	Rolled    string
	HasData   bool
	HasSource bool
	// Gate is why the write gate holds a quarantined memory back: its
	// rules checked again on the memory as it stands (see gateVerdict).
	Gate string
	// EditError is an edit's refusal, as the API words it.
	EditError  string
	Priorities []engram.Priority
	Tags       string // for the edit form
}

func (c *Console) handleMemory(w http.ResponseWriter, r *http.Request) {
	c.showMemory(w, r, r.PathValue("id"), http.StatusOK, "")
}

// showMemory draws memory id's page with status; editErr is the refusal
// of an edit the page's forms posted ("" when none).
func (c *Console) showMemory(w http.ResponseWriter, r *http.Request, id string, status int, editErr string) {
	s := sessionOf(r)
	p := c.newPage(r, s, "memories")
	ctx := r.Context()
	m, err := c.cfg.Memories.FindMemoryByID(ctx, id)
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
	d := memoryData{M: m, CitedBy: cited, Rolled: r.URL.Query().Get("rolled"), EditError: editErr,
		Priorities: []engram.Priority{engram.P0, engram.P1, engram.P2, engram.P3}, Tags: strings.Join(m.Tags, ", "),
		HasData: len(m.Data) > 0 && string(m.Data) != "null", HasSource: len(m.Source) > 0 && string(m.Source) != "null"}
	d.Emotion = engram.EmotionOf(m)
	if d.Links, d.Aliases, err = c.linksOf(ctx, m.ID); err != nil {
		c.renderError(w, r, s, err)
		return
	}
	if m.Quarantined && m.Valid {
		if d.Gate, err = c.gateVerdict(ctx, m); err != nil {
			c.renderError(w, r, s, err)
			return
		}
	}
	if from := r.URL.Query().Get("from"); plainID.MatchString(from) {
		d.From = from
	}
	if c.cfg.Scorer != nil {
		b := c.cfg.Scorer.Score(m, 1)
		b.Superseded, b.Helpfulness, b.OriginFactor = 1, 1, 1
		if c.cfg.Impacts != nil {
			imp, err := c.cfg.Impacts.Impact(ctx, m.ID)
			if err != nil && engram.ErrorCode(err) != engram.ENOTFOUND {
				c.renderError(w, r, s, err)
				return
			}
			if imp != nil {
				b.Helpfulness, b.OriginFactor = imp.Helpfulness, imp.OriginFactor
				b.HelpGood, b.HelpBad, b.Impact = imp.Good, imp.Bad, imp.Effect
				b.Score *= b.Helpfulness
			}
		}
		d.Score, d.HasScore = b, true
	}
	byVersion := map[int64]*engram.FeedbackRecord{}
	if slices.ContainsFunc(events, func(e *engram.MemoryEvent) bool { return e.Action == engram.ActionFeedback }) {
		fbs, err := c.cfg.Insights.FindFeedback(ctx, engram.FeedbackFilter{Limit: historyFeedback, MemoryID: m.ID})
		if err != nil {
			c.renderError(w, r, s, err)
			return
		}
		for _, f := range fbs {
			if f.Result == nil {
				continue
			}
			for _, cr := range f.Result.Credited {
				if cr.ID == m.ID && !cr.Capped {
					byVersion[cr.Version] = f
				}
			}
		}
	}
	for i := len(events) - 1; i >= 0; i-- {
		ev := eventView{MemoryEvent: events[i], Changes: diff(events[i].Before, events[i].After)}
		if ev.Action == engram.ActionFeedback {
			ev.Feedback = byVersion[ev.Version]
		}
		d.Events = append(d.Events, ev)
	}
	switch r.URL.Query().Get("done") {
	case "edited", "revised", "tombstoned", "released":
		p.Notice = p.T("memory.done." + r.URL.Query().Get("done"))
	}
	p.Title = clip(firstLine(m.Content), 60)
	p.Data = d
	c.render(w, status, "memory", p)
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

// linksOf reads a memory's live links and its aliases, when the console
// has the services.
func (c *Console) linksOf(ctx context.Context, id string) ([]*engram.Link, []*engram.Alias, error) {
	var links []*engram.Link
	var aliases []*engram.Alias
	var err error
	if c.cfg.Links != nil {
		if links, err = c.cfg.Links.FindLinks(ctx, id); err != nil {
			return nil, nil, err
		}
	}
	if c.cfg.Aliases != nil {
		if aliases, err = c.cfg.Aliases.FindAliases(ctx, id); err != nil {
			return nil, nil, err
		}
	}
	return links, aliases, nil
}
