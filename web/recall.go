package web

import (
	"net/http"
	"strings"

	"github.com/engram-memory/engram"
)

// recallItemView is an injected (or held back) memory with the text it
// had in the version the recall used.
type recallItemView struct {
	engram.RecallItem
	// Now is the memory's current version when it changed since.
	Now int64
}

type recallData struct {
	R        *engram.RecallRecord
	Items    []recallItemView
	HeldBack *recallItemView
	Feedback []*engram.FeedbackRecord
}

// handleRecall tells one recall's story: the query and its route, what
// was injected in order with each score's factors, the answers given with
// it, and every feedback on it with what the feedback changed. The
// left_out list a recall answered with is not stored; the page shows the
// memory exploration held back, which is.
func (c *Console) handleRecall(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	p := c.newPage(r, s, "feedback")
	ctx := r.Context()
	rec, err := c.cfg.Insights.FindRecallRecord(ctx, r.PathValue("id"))
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	d := recallData{R: rec}
	for _, it := range rec.Items {
		d.Items = append(d.Items, c.itemView(r, it))
	}
	if h := rec.HeldBack; h != nil {
		v := c.itemView(r, *h)
		d.HeldBack = &v
	}
	d.Feedback, err = c.cfg.Insights.FindFeedback(ctx, engram.FeedbackFilter{Limit: feedbackPage, RecallID: rec.ID})
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	p.Title = p.T("recall.title") + " · " + clip(rec.Query, 40)
	p.Data = d
	c.render(w, http.StatusOK, "recall", p)
}

// itemView fills in the text of the version the recall injected: the
// memory's history holds every version (a reflection shows its current
// markdown's title).
func (c *Console) itemView(r *http.Request, it engram.RecallItem) recallItemView {
	v := recallItemView{RecallItem: it}
	if !strings.HasPrefix(it.ID, "mem_") {
		if c.cfg.Reflections != nil {
			if ref, err := c.cfg.Reflections.FindReflectionByID(r.Context(), it.ID); err == nil {
				v.Text = ref.Title
			}
		}
		return v
	}
	m, err := c.cfg.Memories.FindMemoryByID(r.Context(), it.ID)
	if err != nil {
		return v
	}
	v.Category, v.Key, v.Text = m.Category, m.Key, m.Content
	if m.Version != it.Version {
		v.Now = m.Version
		if events, err := c.cfg.Memories.FindMemoryEvents(r.Context(), it.ID); err == nil {
			for _, e := range events {
				if e.Version == it.Version && e.After != nil {
					v.Text = e.After.Content
				}
			}
		}
	}
	if it.UsedSummary && m.Summary != "" && v.Now == 0 {
		v.Text = m.Summary
	}
	return v
}
