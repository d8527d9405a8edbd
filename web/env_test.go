package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/index/indextest"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/reflections"
	"github.com/engram-memory/engram/router"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
	"github.com/engram-memory/engram/web"
	"github.com/engram-memory/engram/working"
)

// env is a console on a real store with the real services, served over
// HTTP, as cmd/engram wires it.
type env struct {
	db       *store.DB
	srv      *httptest.Server
	recall   *learning.Recaller
	feedback *learning.Feedback
	refl     *reflections.Service
	working  *working.Service
	console  *web.Console
}

func newEnv(t testing.TB, engine string) *env {
	return newEnvOn(t, storetest.OpenWith(t, storetest.Options(t, engine)))
}

// newEnvOn serves a console on db; adjust may change its configuration.
func newEnvOn(t testing.TB, db *store.DB, adjust ...func(*web.Config)) *env {
	t.Helper()
	return newEnvWith(t, db, configs.Default(), adjust...)
}

// newEnvWith is newEnvOn with engram's configuration cfg.
func newEnvWith(t testing.TB, db *store.DB, cfg configs.Config, adjust ...func(*web.Config)) *env {
	t.Helper()
	tok := storetest.Tokenizer(t)
	rcfg := router.DefaultConfig()
	rcfg.Categories = cfg.Memory.Categories
	routes := router.NewService(router.New(rcfg), db, cfg.Router.MaxTenants)
	scorer := learning.NewScorer(learning.NewScoreConfig(cfg.Scoring), time.Now)
	e := &env{db: db}
	e.recall = learning.NewRecaller(indextest.Wrap(db), routes, scorer, tok, cfg.Recall, time.Now)
	e.feedback = learning.NewFeedback(db, scorer, cfg.Feedback)
	e.working = working.New(db, db, routes, e.recall, tok, working.Config{Sessions: cfg.Sessions, Limits: cfg.Limits,
		Categories: cfg.Memory.Categories, MaxBudget: cfg.Recall.MaxBudget}, time.Now, nil)
	e.refl = reflections.New(db, reflections.Config{Categories: cfg.Memory.Categories, MinGroup: 3}, nil)
	wcfg := web.Config{
		Auth: db, Sessions: db, Tenants: db, Insights: db,
		Memories: db, Reflections: e.refl, Recall: e.recall, Pairs: e.feedback, Scorer: scorer,
		Markdown: reflections.RenderHTML, LiveSessions: db, Working: e.working, Impacts: e.feedback, Raters: db, Links: db, Aliases: db,
		Export: func(ctx context.Context, w io.Writer, format string, limit int) (int, error) {
			f, err := learning.ParseFormat(format)
			if err != nil {
				return 0, err
			}
			return learning.Export(ctx, e.feedback, w, f, engram.PairFilter{Limit: limit})
		},
		Categories: cfg.Memory.Categories, AdminTenant: "default", MaxBudget: cfg.Recall.MaxBudget,
	}
	for _, a := range adjust {
		a(&wcfg)
	}
	c, err := web.New(wcfg)
	if err != nil {
		t.Fatal(err)
	}
	e.console = c
	e.srv = httptest.NewServer(c)
	t.Cleanup(e.srv.Close)
	return e
}

// key makes a tenant (if needed) and a new API key of it.
func (e *env) key(t testing.TB, tenant string) (secret, id string) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.db.EnsureTenant(ctx, tenant); err != nil {
		t.Fatal(err)
	}
	k, secret, err := e.db.CreateAPIKey(ctx, tenant, "console-test")
	if err != nil {
		t.Fatal(err)
	}
	return secret, k.ID
}

func (e *env) ctx(t testing.TB, tenant string) context.Context {
	return storetest.Tenant(t, e.db, tenant)
}

// fixture is what seed writes into a tenant.
type fixture struct {
	Coffee, Tea, XSS, Dentist *engram.Memory
	Reflection                *engram.Reflection
}

// seed writes memories in English and Chinese (one holding markup), a
// reflection with a table, a task list and a script in its source citing
// two of them, a recall with two answers judged apart (a preference pair).
func (e *env) seed(t testing.TB, tenant string) *fixture {
	t.Helper()
	ctx := e.ctx(t, tenant)
	mk := func(content, category string, tags ...string) *engram.Memory {
		res, err := e.db.CreateMemory(ctx, &engram.Memory{Content: content, Category: category, Tags: tags,
			Data: []byte(`{"origin":"fixture"}`), Source: []byte(`{"kind":"chat","name":"fixture"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return res.Memory
	}
	f := &fixture{
		Coffee:  mk("User drinks coffee black, no sugar", "preference", "coffee"),
		Tea:     mk("我下午只喝绿茶，不喝咖啡", "preference", "饮品"),
		XSS:     mk(`Note with markup <img src=x onerror="document.title='pwned'"> inside`, "work", "markup"),
		Dentist: mk("Dentist appointment next Wednesday at ten", "life", "calendar"),
	}
	md := fmt.Sprintf(`# Preferences: drinks

## What is known

| memory | says |
|---|---|
| [%[1]s@1](/console/memories/%[1]s) | coffee black |
| [%[2]s@1](/console/memories/%[2]s) | 绿茶 |

- [x] checked with the user
- [ ] ask about milk

<script>document.title='scripted'</script>
`, f.Coffee.ID, f.Tea.ID)
	r, _, err := e.db.SaveReflection(ctx, &engram.Reflection{Group: "preference", Category: "preference",
		Title: "Preferences: drinks", Markdown: md, Writer: "extractive", Fingerprint: "fixture",
		Cited:   []engram.MemoryRef{{ID: f.Coffee.ID, Version: 1}, {ID: f.Tea.ID, Version: 1}},
		Members: []engram.MemoryRef{{ID: f.Coffee.ID, Version: 1}, {ID: f.Tea.ID, Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	f.Reflection = r
	rec, err := e.recall.Recall(ctx, engram.RecallRequest{Query: "how does the user take coffee", TokenBudget: 300})
	if err != nil {
		t.Fatal(err)
	}
	for i, answer := range []string{"Black, no sugar.", "With milk and two sugars."} {
		in, err := e.feedback.CreateInteraction(ctx, &engram.Interaction{Prompt: "How do I take my coffee?", Response: answer,
			RecallID: rec.ID, SessionID: "s1", TurnID: "t1"})
		if err != nil {
			t.Fatal(err)
		}
		thumb := engram.ThumbUp
		if i == 1 {
			thumb = engram.ThumbDown
		}
		if _, err := e.feedback.SubmitFeedback(ctx, engram.FeedbackInput{InteractionID: in.ID, Thumb: thumb,
			Reason: "fixture " + thumb, Rater: fmt.Sprintf("rater-%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// client is a browser-like HTTP client: a cookie jar, no redirects
// followed, so a test sees each answer.
type client struct {
	t    testing.TB
	base string
	http *http.Client
}

func (e *env) client(t testing.TB) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, base: e.srv.URL, http: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	Status int
	Header http.Header
	Body   string
}

func (c *client) do(method, path string, form url.Values) *page {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return &page{Status: res.StatusCode, Header: res.Header, Body: string(b)}
}

func (c *client) get(path string) *page { return c.do(http.MethodGet, path, nil) }

func (c *client) post(path string, form url.Values) *page { return c.do(http.MethodPost, path, form) }

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token of the first form on a page.
func (p *page) csrf(t testing.TB) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("no CSRF field on the page: %.300s", p.Body)
	}
	return m[1]
}

// signIn signs c in with secret and returns the session's CSRF token.
func (c *client) signIn(secret string) string {
	c.t.Helper()
	form := c.get("/console/signin")
	res := c.post("/console/signin", url.Values{"csrf": {form.csrf(c.t)}, "key": {secret}, "next": {"/console/"}})
	if res.Status != http.StatusSeeOther || res.Header.Get("Location") != "/console/" {
		c.t.Fatalf("sign-in: %d %s: %.300s", res.Status, res.Header.Get("Location"), res.Body)
	}
	home := c.get("/console/")
	if home.Status != http.StatusOK {
		c.t.Fatalf("overview after sign-in: %d", home.Status)
	}
	return home.csrf(c.t)
}
