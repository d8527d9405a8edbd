package web

import (
	"net/http"
	"net/url"

	"github.com/engram-memory/engram"
)

// handleRegenerate runs the reflector on the reflection's category and
// goes back to the reflection with what the reflector did to its group
// (a new version, or why it skipped it: an unchanged group is skipped).
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
	res, err := c.cfg.Reflections.Reflect(ctx, engram.ReflectRequest{Category: ref.Category})
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	outcome := "unchanged"
	for _, o := range res.Written {
		if o.Group == ref.Group {
			outcome = "regenerated"
		}
	}
	for _, o := range res.Failed {
		if o.Group == ref.Group {
			c.renderError(w, r, s, engram.Errorf(engram.EINTERNAL, "regenerate %s: %s", ref.ID, o.Reason))
			return
		}
	}
	http.Redirect(w, r, "/console/reflections/"+url.PathEscape(ref.ID)+"?done="+outcome, http.StatusSeeOther)
}
