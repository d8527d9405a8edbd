package web

import (
	"net/http"
	"time"

	"github.com/engram-memory/engram"
)

type learningData struct {
	Since    time.Time
	Sections []movementSection
	// Raters are those whose weight fell below a fresh rater's; nil
	// when the console has no rater reputations to read.
	Raters []raterView
	// ShowRaters is whether the raters section is shown at all.
	ShowRaters bool
	// Features is the learned features section (see features.go).
	Features *featuresView
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
	if d.Features, err = c.learnedFeatures(ctx, p); err != nil {
		c.renderError(w, r, s, err)
		return
	}
	p.Data = d
	c.render(w, http.StatusOK, "learning", p)
}
