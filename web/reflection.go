package web

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"

	"github.com/engram-memory/engram"
)

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
	switch r.URL.Query().Get("done") {
	case "regenerated", "unchanged":
		p.Notice = p.T("reflection.done." + r.URL.Query().Get("done"))
	}
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
