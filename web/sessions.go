package web

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/engram-memory/engram"
)

const (
	// sessionsShown is how many sessions the sessions page lists.
	sessionsShown = 100
	// eventsShown is how many of a session's newest events its page lists.
	eventsShown = 50
)

type sessionsData struct {
	Items []*engram.Session
	Limit int
}

func (c *Console) handleSessions(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	p := c.newPage(r, s, "sessions")
	if c.cfg.LiveSessions == nil || c.cfg.Working == nil {
		c.renderError(w, r, s, engram.Errorf(engram.ENOTFOUND, "working memory is not enabled"))
		return
	}
	items, err := c.cfg.LiveSessions.FindSessions(r.Context(), sessionsShown)
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	p.Data = sessionsData{Items: items, Limit: sessionsShown}
	c.render(w, http.StatusOK, "sessions", p)
}

type sessionData struct {
	S          *engram.Session
	Events     []*engram.SessionEvent // newest first
	More       int64                  // older events not shown
	TokenLimit int
	MaxBudget  int
	Context    *engram.SessionContext
	Meter      *chart
	Error      string
}

func (c *Console) handleSession(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	p := c.newPage(r, s, "sessions")
	if c.cfg.LiveSessions == nil || c.cfg.Working == nil {
		c.renderError(w, r, s, engram.Errorf(engram.ENOTFOUND, "working memory is not enabled"))
		return
	}
	ctx := r.Context()
	id := r.PathValue("id")
	list, err := c.cfg.Working.Events(ctx, id, engram.EventPage{Limit: eventsShown, Newest: true})
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	d := sessionData{S: list.Session, TokenLimit: engram.DefaultBudget(c.cfg.MaxBudget), MaxBudget: c.cfg.MaxBudget}
	d.More = max(list.Session.Events-int64(len(list.Events)), 0)
	d.Events = slices.Clone(list.Events)
	slices.Reverse(d.Events)
	status := http.StatusOK
	if v := strings.TrimSpace(r.URL.Query().Get("token_limit")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			status, d.Error = http.StatusBadRequest, p.T("session.badlimit")
		} else {
			d.TokenLimit = n
		}
	}
	if d.Error == "" {
		sc, err := c.cfg.Working.Context(ctx, id, d.TokenLimit)
		switch {
		case engram.ErrorCode(err) == engram.EINVALID:
			status, d.Error = http.StatusBadRequest, engram.ErrorMessage(err)
		case err != nil:
			c.renderError(w, r, s, err)
			return
		default:
			d.Context = sc
			d.Meter = meter(p.T("session.meter"), sc.TokensUsed, sc.TokenLimit)
		}
	}
	p.Data = d
	c.render(w, status, "session", p)
}
