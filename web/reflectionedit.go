package web

import (
	"context"
	"net/http"
	"net/url"

	"github.com/engram-memory/engram"
)

// handleRegenerate runs the reflector on the reflection's category and
// goes back to the reflection with what the reflector did to its group
// (a new version, or why it skipped it: an unchanged group is skipped).
// On a large tenant the reflect is a job: the browser goes to the job's
// page, which follows its progress and links back when it is done.
func (c *Console) handleRegenerate(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	if c.cfg.Reflections == nil {
		c.renderError(w, r, s, engram.Errorf(engram.ENOTFOUND, "reflections are not enabled"))
		return
	}
	ctx := r.Context()
	ref, err := c.cfg.Reflections.FindReflectionByID(ctx, r.PathValue("id"))
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	res, err := c.reflect(ctx, ref.Category)
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	if res.job != nil {
		http.Redirect(w, r, jobURL(res.job, ref.ID), http.StatusSeeOther)
		return
	}
	outcome, err := c.outcome(r, ref.ID, res.result)
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	http.Redirect(w, r, "/console/reflections/"+url.PathEscape(ref.ID)+"?done="+outcome, http.StatusSeeOther)
}

// reflected is a reflect's answer: its result when it ran in the
// request, or the job that runs it.
type reflected struct {
	result *engram.ReflectResult
	job    *engram.Job
}

// reflect runs the reflector on category as POST /v1/reflect does: with
// the jobs service, inline on a small tenant and as a job on a large one
// (docs/jobs.md); without it, always inline.
func (c *Console) reflect(ctx context.Context, category string) (reflected, error) {
	req := engram.ReflectRequest{Category: category}
	if c.cfg.Jobs != nil {
		res, job, err := c.cfg.Jobs.Reflect(ctx, req)
		return reflected{result: res, job: job}, err
	}
	res, err := c.cfg.Reflections.Reflect(ctx, req)
	return reflected{result: res}, err
}
