package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/engram-memory/engram"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// asset is one embedded static file, served under a name that carries
// its content hash ("console.3f2a9c1e.css"), so it is cached for good and
// a new build changes the URL.
type asset struct {
	body  []byte
	ctype string
	etag  string
}

var (
	assets    = map[string]*asset{} // hashed name → file
	assetURLs = map[string]string{} // plain name → URL
)

func init() {
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		h := hex.EncodeToString(sum[:4])
		name := path.Base(p)
		ext := path.Ext(name)
		hashed := strings.TrimSuffix(name, ext) + "." + h + ext
		assets[hashed] = &asset{body: body, ctype: mime.TypeByExtension(ext), etag: `"` + h + `"`}
		assetURLs[name] = "/console/static/" + hashed
		return nil
	})
	if err != nil {
		panic(err)
	}
}

func serveAsset(w http.ResponseWriter, r *http.Request) {
	a, ok := assets[r.PathValue("name")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", a.ctype)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	w.Header().Set("ETag", a.etag)
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write(a.body)
}

var funcs = template.FuncMap{
	"asset": func(name string) string { return assetURLs[name] },
	"clip":  clip,
	"pct":   pct,
	"f2":    f2,
	"f3":    f3,
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"whenp": func(t *time.Time) string {
		if t == nil || t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"pretty":    prettyJSON,
	"effect":    effect,
	"q":         url.QueryEscape,
	"join":      strings.Join,
	"hasPrefix": strings.HasPrefix,
	"firstLine": firstLine,
	"stars":     stars,
}

// stars draws a 1–5 rating as filled and empty stars.
func stars(n int) string {
	n = max(0, min(n, 5))
	return strings.Repeat("★", n) + strings.Repeat("☆", 5-n)
}

func f2(v float64) string { return fmt.Sprintf("%.2f", v) }
func f3(v float64) string { return fmt.Sprintf("%.3f", v) }

// trustedHTML marks HTML that the console's Markdown renderer produced.
func trustedHTML(s string) template.HTML {
	return template.HTML(s) //nolint:gosec // goldmark output with raw HTML omitted
}

// prettyJSON indents a JSON document; anything else is shown as it is.
// effect formats a measured impact with its 95% interval, if any.
func effect(v *float64, ci []float64) string {
	if v == nil {
		return "—"
	}
	if len(ci) == 2 {
		return fmt.Sprintf("%+.2f [%+.2f, %+.2f]", *v, ci[0], ci[1])
	}
	return fmt.Sprintf("%+.2f", *v)
}

func prettyJSON(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// pageNames are the templates under templates/, each executed inside
// layout.html.
var pageNames = []string{"signin", "error", "overview", "memories", "memory", "reflections", "reflection",
	"feedback", "recall", "pairs", "learning", "playground", "sessions", "session", "job"}

func parsePages() (map[string]*template.Template, error) {
	out := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/charts.html", "templates/breakdown.html", "templates/story.html", "templates/features.html",
			"templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("web: parse %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// page is what every template gets: the language, the session (nil when
// signed out), the active section and the page's own data.
type page struct {
	Lang    string
	Title   string
	Nav     string
	Path    string // this page, for the language switch
	CSRF    string
	Session *session
	Notice  string
	// Refresh, when positive, reloads the page after that many seconds
	// (a job's page while it runs).
	Refresh int
	Data    any
}

// T translates a message key into the page's language.
func (p *page) T(key string) string { return tr(p.Lang, key) }

// Tf translates a key and formats it with args.
func (p *page) Tf(key string, args ...any) string { return fmt.Sprintf(tr(p.Lang, key), args...) }

// Breakdown is the data of the "breakdown" partial for b.
func (p *page) Breakdown(b engram.ScoreBreakdown) breakdownView {
	v := breakdownOf(p, b)
	v.P = p
	return v
}

// storyView is the data of the "judgement" and "changed" partials.
type storyView struct {
	P *page
	F *engram.FeedbackRecord
}

// Story is the data of the feedback partials for f.
func (p *page) Story(f *engram.FeedbackRecord) storyView { return storyView{P: p, F: f} }

// Writer names a reflection's writer in the page's language: the
// extractive writer, or the chat model ("chat:<model>").
func (p *page) Writer(name string) string {
	if model, ok := strings.CutPrefix(name, "chat:"); ok {
		return p.T("writer.chat") + " " + model
	}
	if name == "extractive" {
		return p.T("writer.extractive")
	}
	return name
}

// StatusText names an HTTP status in the page's language (Go's English
// name for a status the console has no message for).
func (p *page) StatusText(code int) string {
	key := fmt.Sprintf("status.%d", code)
	if _, ok := messages[key]; ok {
		return p.T(key)
	}
	return http.StatusText(code)
}

// Other is the language the switch offers.
func (p *page) Other() string {
	if p.Lang == "zh" {
		return "en"
	}
	return "zh"
}

func (c *Console) newPage(r *http.Request, s *session, nav string) *page {
	p := &page{Lang: langOf(r), Nav: nav, Path: r.URL.RequestURI(), Session: s}
	if s != nil {
		p.CSRF = s.CSRF
	}
	p.Title = p.T("nav." + nav)
	return p
}

func (c *Console) render(w http.ResponseWriter, status int, name string, p *page) {
	var b bytes.Buffer
	if err := c.pages[name].Execute(&b, p); err != nil {
		c.cfg.Logger.Error("console render", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

type errorData struct {
	Status  int
	Message string
}

func (c *Console) renderError(w http.ResponseWriter, r *http.Request, s *session, err error) {
	status := statusOf(err)
	p := c.newPage(r, s, "error")
	if s != nil {
		p.CSRF = s.CSRF
	}
	p.Data = errorData{Status: status, Message: c.errorMessage(r, err)}
	c.render(w, status, "error", p)
}
