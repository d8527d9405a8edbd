package web

import (
	"math"
	"net/http"
	"net/url"
	"sort"
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
	// Charts: feedback per day, the reward distribution of live
	// memories, the helpfulness of the memories feedback moved, the most
	// promoted and demoted, and down/up votes by origin (kind of memory).
	Votes, Rewards, Help, Promoted, Demoted, Origins, RaterWeights *chart
	// Recovery sets each day's corrections (answers repaired into new
	// knowledge) beside its negative feedback.
	Recovery *chart
	// Features is the learned features section (see features.go).
	Features *featuresView
}

// recoveryPages bounds the feedback the recovery chart reads: that many
// pages of the feedback stream, newest first.
const recoveryPages = 20

// recovery counts, per day of days, the negative feedback and the
// corrections among them.
func (c *Console) recovery(r *http.Request, days []engram.DayVotes) ([]engram.DayVotes, error) {
	out := make([]engram.DayVotes, len(days))
	index := map[string]int{}
	for i, d := range days {
		out[i].Day = d.Day
		index[d.Day.UTC().Format(time.DateOnly)] = i
	}
	if len(days) == 0 {
		return out, nil
	}
	f := engram.FeedbackFilter{Limit: feedbackPage, Signal: engram.ThumbDown, Since: days[0].Day}
	for range recoveryPages {
		items, err := c.cfg.Insights.FindFeedback(r.Context(), f)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			i, ok := index[it.CreatedAt.UTC().Format(time.DateOnly)]
			if !ok {
				continue
			}
			out[i].Down++
			if it.Correction != "" {
				out[i].Up++
			}
		}
		if len(items) < f.Limit {
			break
		}
		f.Before = items[len(items)-1].Seq
	}
	return out, nil
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
	st, err := c.cfg.Insights.TenantStats(ctx, c.cfg.Now().UTC().Add(-(overviewDays-1)*24*time.Hour))
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	d.charts(p, st)
	rec, err := c.recovery(r, st.Days)
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	d.Recovery = votesChart(p.T("chart.recovery"), p.T("chart.corrections"), p.T("vote.down"), rec)
	d.Recovery.Link, d.Recovery.LinkText = "/console/feedback?signal=down", p.T("chart.evidence")
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
	if len(d.Raters) > 0 {
		var labels []string
		var values []int64
		for _, rv := range d.Raters[:min(len(d.Raters), 8)] {
			labels = append(labels, clip(rv.Rater, 16))
			values = append(values, int64(rv.Weight*100+0.5))
		}
		d.RaterWeights = hbars(p.T("chart.raterweights"), labels, values)
		d.RaterWeights.Link, d.RaterWeights.LinkText = "/console/feedback?rater="+url.QueryEscape(d.Raters[0].Rater), p.T("chart.evidence")
	}
	if d.Features, err = c.learnedFeatures(ctx, p); err != nil {
		c.renderError(w, r, s, err)
		return
	}
	p.Data = d
	c.render(w, http.StatusOK, "learning", p)
}

// charts draws the learning page's pictures from the tenant's stats and
// the movements already read.
func (d *learningData) charts(p *page, st *engram.TenantStats) {
	d.Votes = votesChart(p.T("chart.votes"), p.T("vote.up"), p.T("vote.down"), st.Days)
	d.Votes.Link, d.Votes.LinkText = "/console/feedback?signal=down", p.T("chart.evidence")
	d.Rewards = histogram(p.T("chart.rewards"), st.RewardBins)
	d.Rewards.Link, d.Rewards.LinkText = "/console/memories", p.T("chart.evidence")
	var help [10]int64
	type originVotes struct{ up, down int64 }
	origins := map[string]*originVotes{}
	var order []string
	for _, sec := range d.Sections {
		var labels []string
		var values []int64
		for _, it := range sec.Items {
			if it.Impact != nil {
				help[min(int(it.Impact.Helpfulness*10), 9)]++
			}
			o := it.Memory.Origin()
			if origins[o] == nil {
				origins[o] = &originVotes{}
				order = append(order, o)
			}
			origins[o].up += it.Up
			origins[o].down += it.Down
			if len(labels) < 8 {
				labels = append(labels, clip(firstLine(it.Memory.Content), 18))
				values = append(values, int64(math.Abs(it.Net)*100+0.5))
			}
		}
		if len(labels) == 0 {
			continue
		}
		ch := hbars(p.T("chart."+sec.Kind), labels, values)
		ch.Link, ch.LinkText = "#"+sec.Kind, p.T("chart.evidence")
		if sec.Kind == "promoted" {
			d.Promoted = ch
		} else {
			d.Demoted = ch
		}
	}
	if len(d.Sections) > 0 && (len(d.Sections[0].Items) > 0 || len(d.Sections[1].Items) > 0) {
		d.Help = unitHistogram(p.T("chart.help"), help)
		d.Help.Link, d.Help.LinkText = "#demoted", p.T("chart.evidence")
	}
	if len(order) > 0 {
		sort.SliceStable(order, func(i, j int) bool { return origins[order[i]].down > origins[order[j]].down })
		var labels []string
		var values []int64
		for _, o := range order[:min(len(order), 8)] {
			labels = append(labels, clip(o, 18))
			values = append(values, origins[o].down)
		}
		d.Origins = hbars(p.T("chart.origins"), labels, values)
		d.Origins.Link, d.Origins.LinkText = "/console/feedback?signal=down", p.T("chart.evidence")
	}
}
