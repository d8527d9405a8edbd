package web

import (
	"net/http"
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

// playgroundBudget is the token budget the playground offers first,
// never more than recall.max_budget.
const playgroundBudget = 500

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
	d := playgroundData{Budget: min(playgroundBudget, c.cfg.MaxBudget), MaxBudget: c.cfg.MaxBudget}
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
