package web_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// The browser tests drive the console in headless Chromium (Debian's
// chromium package). Without a Chromium they skip, unless
// ENGRAM_TEST_REQUIRE_BROWSER is set (CI sets it), which makes them fail.
// ENGRAM_TEST_CHROMIUM names the binary; ENGRAM_TEST_ARTIFACTS keeps the
// screenshots (taken on failure, and of every page the journey visits).
const (
	requireBrowserEnv = "ENGRAM_TEST_REQUIRE_BROWSER"
	chromiumEnv       = "ENGRAM_TEST_CHROMIUM"
	artifactsEnv      = "ENGRAM_TEST_ARTIFACTS"
)

// shared is one browser for the whole test binary; each test gets its own
// tab in its own browser context (its own cookies).
var shared struct {
	once    sync.Once
	ctx     context.Context
	cancel  func()
	dataDir string
	err     error
	missing bool
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cancel != nil {
		shared.cancel()
		_ = os.RemoveAll(shared.dataDir)
	}
	os.Exit(code)
}

func chromiumPath() string {
	if p := os.Getenv(chromiumEnv); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func startBrowser() {
	path := chromiumPath()
	if path == "" {
		shared.missing = true
		return
	}
	shared.dataDir, shared.err = os.MkdirTemp("", "engram-chromium-")
	if shared.err != nil {
		return
	}
	// The network is closed: nothing may phone home, so every background
	// service that would try is off.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(shared.dataDir),
		chromedp.WindowSize(1280, 800),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx); err != nil {
		cancelCtx()
		cancelAlloc()
		shared.err = fmt.Errorf("start %s: %w", path, err)
		return
	}
	shared.ctx = ctx
	shared.cancel = func() { cancelCtx(); cancelAlloc() }
}

// tab returns a fresh tab of the shared browser at 1280×800, with a
// screenshot saved (and its path logged) if the test fails.
func tab(t *testing.T) context.Context {
	t.Helper()
	shared.once.Do(startBrowser)
	switch {
	case shared.missing && os.Getenv(requireBrowserEnv) != "":
		t.Fatalf("%s is set but no Chromium was found (install Debian's chromium, or set %s)", requireBrowserEnv, chromiumEnv)
	case shared.missing:
		t.Skipf("no Chromium found: browser tests skipped (apt-get install chromium fonts-wqy-zenhei, or set %s)", chromiumEnv)
	case shared.err != nil:
		t.Fatal(shared.err)
	}
	ctx, cancel := chromedp.NewContext(shared.ctx, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	tctx, tcancel := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(tcancel)
	t.Cleanup(func() {
		if t.Failed() {
			shot(t, ctx, "failure")
		}
	})
	return tctx
}

// shot saves a screenshot of the tab under the artifacts directory (or a
// temporary one) and logs its path.
func shot(t *testing.T, ctx context.Context, name string) string {
	dir := os.Getenv(artifactsEnv)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "engram-console-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("screenshot: %v", err)
		return ""
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	buf, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot: %v", err)
		return ""
	}
	path := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+"-"+name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Logf("screenshot: %v", err)
		return ""
	}
	t.Logf("screenshot: %s", path)
	return path
}

// browserSignIn signs in through the form.
func browserSignIn(t *testing.T, ctx context.Context, base, secret string) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/console/"),
		chromedp.WaitVisible(chromedp.ID("key")),
		chromedp.SendKeys(chromedp.ID("key"), secret),
		chromedp.Click(chromedp.ID("signin-submit")),
		chromedp.WaitVisible(chromedp.ID("stat-live")),
	); err != nil {
		t.Fatalf("sign in: %v", err)
	}
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

func location(t *testing.T, ctx context.Context) string {
	t.Helper()
	u, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestBrowserSignInOut(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, "sqlite")
	secret, _ := e.key(t, "acme")

	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.srv.URL+"/console/memories"),
		chromedp.WaitVisible(chromedp.ID("key")),
		chromedp.SendKeys(chromedp.ID("key"), "egk_not_a_key"),
		chromedp.Click(chromedp.ID("signin-submit")),
		chromedp.WaitVisible(chromedp.ID("signin-error")),
	); err != nil {
		t.Fatal(err)
	}
	if msg := text(t, ctx, "#signin-error"); !strings.Contains(msg, "unknown or revoked") {
		t.Errorf("wrong key message %q", msg)
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("key"), secret),
		chromedp.Click(chromedp.ID("signin-submit")),
		chromedp.WaitVisible(chromedp.ID("memory-filters")),
	); err != nil {
		t.Fatal(err)
	}
	if u := location(t, ctx); !strings.HasSuffix(u, "/console/memories") {
		t.Errorf("after sign-in the browser is at %s, want the page it asked for", u)
	}
	if cookies := eval[string](t, ctx, "document.cookie"); strings.Contains(cookies, "engram_session") {
		t.Errorf("the session cookie is readable by scripts: %q", cookies)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("signout")),
		chromedp.WaitVisible(chromedp.ID("signin-form")),
		chromedp.Navigate(e.srv.URL+"/console/"),
		chromedp.WaitVisible(chromedp.ID("signin-form")),
	); err != nil {
		t.Fatalf("after signing out the console still opens: %v", err)
	}
}

func TestBrowserMemories(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, "sqlite")
	secret, _ := e.key(t, "acme")
	f := e.seed(t, "acme")
	browserSignIn(t, ctx, e.srv.URL, secret)

	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.srv.URL+"/console/memories"),
		chromedp.WaitVisible(chromedp.ID("memory-list")),
		chromedp.SendKeys(chromedp.ID("q"), "绿茶"),
		chromedp.Click(chromedp.ID("search")),
		// The unfiltered list holds the tea memory too: wait for the
		// filtered page before counting.
		chromedp.WaitVisible(chromedp.ID("filter-clear")),
		chromedp.WaitVisible(chromedp.CSS(`#memory-list a[href="/console/memories/`+f.Tea.ID+`"]`)),
	); err != nil {
		t.Fatal(err)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#memory-list tbody tr").length`); n != 1 {
		t.Errorf("searching 绿茶 lists %d memories, want 1", n)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#memory-list a.memory-link`)),
		chromedp.WaitVisible(chromedp.ID("memory-content")),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#memory-content"); s != f.Tea.Content {
		t.Errorf("memory page shows %q", s)
	}

	// Markup in a memory is text: shown as written, never run.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.srv.URL+"/console/memories/"+f.XSS.ID),
		chromedp.WaitVisible(chromedp.ID("memory-content")),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#memory-content"); !strings.Contains(s, `<img src=x onerror="document.title='pwned'">`) {
		t.Errorf("the memory's markup is not shown as text: %q", s)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("main img").length`); n != 0 {
		t.Errorf("the memory's markup made %d img elements", n)
	}
	if title := eval[string](t, ctx, "document.title"); title == "pwned" {
		t.Error("the memory's onerror handler ran")
	}
}

func TestBrowserReflection(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, "sqlite")
	secret, _ := e.key(t, "acme")
	f := e.seed(t, "acme")
	browserSignIn(t, ctx, e.srv.URL, secret)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.srv.URL+"/console/reflections/"+f.Reflection.ID),
		chromedp.WaitVisible(chromedp.CSS("#reflection-body table")),
	); err != nil {
		t.Fatal(err)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#reflection-body table tbody tr").length`); n != 2 {
		t.Errorf("the table has %d rows, want 2", n)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#reflection-body input[type=checkbox]").length`); n != 2 {
		t.Errorf("the task list has %d boxes, want 2", n)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#reflection-body script").length`); n != 0 {
		t.Error("the reflection's script is in the page")
	}
	if title := eval[string](t, ctx, "document.title"); title == "scripted" {
		t.Error("the reflection's script ran")
	}
}

func TestBrowserPlayground(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, "sqlite")
	secret, _ := e.key(t, "acme")
	f := e.seed(t, "acme")
	browserSignIn(t, ctx, e.srv.URL, secret)
	playground(t, ctx, e.srv.URL, "How does the user take their coffee?", 60)
	if n := eval[int](t, ctx, `document.querySelectorAll('#recall-items a[href="/console/memories/`+f.Coffee.ID+`"]').length`); n != 1 {
		t.Error("the coffee memory is not in the packed context")
	}
	// Every injected item shows a match above 0, and every candidate left
	// out names why.
	if n := eval[int](t, ctx, `[...document.querySelectorAll("#recall-items .item-match")].filter(td => !(Number(td.textContent) > 0)).length`); n != 0 {
		t.Errorf("%d injected items show no match", n)
	}
	if n := eval[int](t, ctx, `[...document.querySelectorAll("#left-out-items .cut-reason")].filter(td => td.textContent.trim() === "").length`); n != 0 {
		t.Errorf("%d left-out candidates give no reason", n)
	}
	// A query nothing answers injects nothing: the playground says so.
	playgroundQuery(t, ctx, e.srv.URL, "How many moons does Neptune have?", 2000)
	if n := eval[int](t, ctx, `document.querySelectorAll("#empty-recall").length + 10*document.querySelectorAll("#recall-items").length`); n != 1 {
		t.Error("a query nothing answers did not show the empty recall")
	}
}

// playgroundQuery runs a query in the playground and waits for its route.
func playgroundQuery(t *testing.T, ctx context.Context, base, query string, budget int) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/console/playground"),
		chromedp.WaitVisible(chromedp.ID("query")),
		chromedp.SendKeys(chromedp.ID("query"), query),
		chromedp.SetValue(chromedp.ID("budget"), fmt.Sprint(budget)),
		chromedp.Click(chromedp.ID("run-recall")),
		chromedp.WaitVisible(chromedp.ID("route-intent")),
	); err != nil {
		t.Fatal(err)
	}
}

// playground runs a query and checks the route, the items and the total
// against the budget.
func playground(t *testing.T, ctx context.Context, base, query string, budget int) {
	t.Helper()
	playgroundQuery(t, ctx, base, query, budget)
	if intent := text(t, ctx, "#route-intent"); intent != "ask" && intent != "decide" && intent != "reflect" {
		t.Errorf("route intent %q", intent)
	}
	sum := eval[int](t, ctx, `[...document.querySelectorAll("#recall-items .item-tokens")].reduce((s, td) => s + Number(td.textContent), 0)`)
	if sum == 0 || sum > budget {
		t.Errorf("items hold %d tokens for a budget of %d", sum, budget)
	}
	if total := text(t, ctx, "#token-total"); !strings.Contains(total, fmt.Sprintf("of %d tokens", budget)) && !strings.Contains(total, fmt.Sprintf("/ %d", budget)) {
		t.Errorf("total %q does not show the budget", total)
	}
}

// download clicks a download button and returns the file's content.
func download(t *testing.T, ctx context.Context, base, format string) string {
	t.Helper()
	dir := t.TempDir()
	c := chromedp.FromContext(ctx)
	if _, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, BrowserContextID: c.BrowserContextID, DownloadPath: dir}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/console/pairs?format="+format),
		chromedp.WaitVisible(chromedp.ID("download-"+format)),
		chromedp.Click(chromedp.ID("download-"+format)),
	); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "engram-acme-"+format+".jsonl")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(want); err == nil && len(b) > 0 {
			return string(b)
		}
	}
	files, _ := os.ReadDir(dir)
	t.Fatalf("no download at %s (the directory holds %v)", want, files)
	return ""
}

func TestBrowserPairDownload(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, "sqlite")
	secret, _ := e.key(t, "acme")
	e.seed(t, "acme")
	browserSignIn(t, ctx, e.srv.URL, secret)
	got := download(t, ctx, e.srv.URL, "openai")
	if !strings.Contains(got, `"preferred_output"`) || !strings.Contains(got, "Black, no sugar.") {
		t.Errorf("downloaded openai pairs: %q", got)
	}
}

// TestBrowserFormWithoutCSRF submits a real form whose token was removed.
func TestBrowserFormWithoutCSRF(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, "sqlite")
	secret, _ := e.key(t, "acme")
	browserSignIn(t, ctx, e.srv.URL, secret)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.srv.URL+"/console/playground"),
		chromedp.WaitVisible(chromedp.ID("query")),
		chromedp.SendKeys(chromedp.ID("query"), "coffee"),
	); err != nil {
		t.Fatal(err)
	}
	eval[bool](t, ctx, `document.querySelector('#playground-form input[name=csrf]').remove(), true`)
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("run-recall")),
		chromedp.WaitVisible(chromedp.ID("error-message")),
	); err != nil {
		t.Fatal(err)
	}
	if msg := text(t, ctx, "#error-message"); !strings.Contains(msg, "CSRF") {
		t.Errorf("a form without its token: %q", msg)
	}
	if h := text(t, ctx, "main h1"); h != "403" {
		t.Errorf("status heading %q, want 403", h)
	}
}

// TestBrowserJourney is the analyst's way through the console: sign in,
// find a reflection, follow a citation to its memory and back, try a
// query in the playground, download the pairs; then the same pages in
// Chinese, and at a phone's width.
func TestBrowserJourney(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, "sqlite")
	secret, _ := e.key(t, "acme")
	f := e.seed(t, "acme")
	e.startSession(t, "acme", "trip-1", "user-7")
	keep := os.Getenv(artifactsEnv) != ""
	if keep {
		if err := chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+"/console/signin"), chromedp.WaitVisible(chromedp.ID("key"))); err != nil {
			t.Fatal(err)
		}
		shot(t, ctx, "signin-en")
	}
	browserSignIn(t, ctx, e.srv.URL, secret)
	if keep {
		shot(t, ctx, "overview-en")
	}

	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`nav.main a[href="/console/reflections"]`)),
		chromedp.WaitVisible(chromedp.ID("reflection-list")),
		chromedp.Click(chromedp.CSS(`#reflection-list a.reflection-link`)),
		chromedp.WaitVisible(chromedp.CSS("#reflection-body table")),
	); err != nil {
		t.Fatal(err)
	}
	reflURL := location(t, ctx)
	if keep {
		shot(t, ctx, "reflection-en")
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#reflection-body a[href^="/console/memories/`+f.Coffee.ID+`"]`)),
		chromedp.WaitVisible(chromedp.ID("memory-content")),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#memory-content"); s != f.Coffee.Content {
		t.Errorf("the citation led to %q", s)
	}
	if keep {
		shot(t, ctx, "memory-en")
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("back-to-reflection")),
		chromedp.WaitVisible(chromedp.CSS("#reflection-body table")),
	); err != nil {
		t.Fatal(err)
	}
	if u := location(t, ctx); u != reflURL {
		t.Errorf("back from the memory at %s, want %s", u, reflURL)
	}

	playground(t, ctx, e.srv.URL, "How does the user take their coffee?", 200)
	if keep {
		shot(t, ctx, "playground-en")
	}
	if got := download(t, ctx, e.srv.URL, "trl"); !strings.Contains(got, `"chosen":"Black, no sugar."`) {
		t.Errorf("downloaded trl pairs: %q", got)
	}

	// Working memory: the live session and its context within a limit.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`nav.main a[href="/console/sessions"]`)),
		chromedp.WaitVisible(chromedp.ID("sessions")),
	); err != nil {
		t.Fatal(err)
	}
	if keep {
		shot(t, ctx, "sessions-en")
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#sessions a.session-link`)),
		chromedp.WaitVisible(chromedp.ID("context-text")),
		chromedp.SetValue(chromedp.ID("token-limit"), "60"),
		chromedp.Click(chromedp.ID("render-context")),
		// The rendered page, not the one the form was on: its field's
		// attribute (not only its value) is the new limit.
		chromedp.WaitVisible(chromedp.CSS(`#token-limit[value="60"]`)),
		chromedp.WaitVisible(chromedp.ID("context-text")),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#context-total"); !strings.Contains(s, "of 60 tokens used") {
		t.Errorf("the session context at token_limit 60 reads %q", s)
	}
	if s := text(t, ctx, "#context-text"); !strings.Contains(s, "Kyoto") {
		t.Errorf("the session context lacks the session's focus: %q", s)
	}
	if keep {
		shot(t, ctx, "session-en")
	}

	if keep {
		for _, p := range []string{"feedback", "pairs", "learning", "memories", "reflections"} {
			if err := chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+"/console/"+p), chromedp.WaitVisible(chromedp.CSS("main h1"))); err != nil {
				t.Fatal(err)
			}
			shot(t, ctx, p+"-en")
		}
	}

	// Chinese: the switch is remembered across pages.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.srv.URL+"/console/"),
		chromedp.WaitVisible(chromedp.ID("lang-switch")),
		chromedp.Click(chromedp.ID("lang-switch")),
		chromedp.WaitVisible(chromedp.ID("stat-live")),
	); err != nil {
		t.Fatal(err)
	}
	if h := text(t, ctx, "main h1"); !strings.Contains(h, "概览") {
		t.Errorf("after switching to Chinese the heading is %q", h)
	}
	if keep {
		shot(t, ctx, "overview-zh")
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.srv.URL+"/console/memories/"+f.Tea.ID),
		chromedp.WaitVisible(chromedp.ID("memory-content")),
	); err != nil {
		t.Fatal(err)
	}
	if h := text(t, ctx, "section.card h2"); h != "内容" {
		t.Errorf("the memory page is not in Chinese: %q", h)
	}
	if keep {
		shot(t, ctx, "memory-zh")
	}

	// A phone: every page fits the width (tables scroll inside their
	// own box) and the navigation stays reachable.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/console/", "/console/memories", "/console/reflections/" + f.Reflection.ID,
		"/console/memories/" + f.Coffee.ID, "/console/feedback", "/console/pairs", "/console/learning", "/console/playground", "/console/sessions", "/console/sessions/trip-1"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(e.srv.URL+p), chromedp.WaitVisible(chromedp.ID("nav-button"))); err != nil {
			t.Fatal(err)
		}
		if over := eval[int](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 1 {
			t.Errorf("%s is %d px wider than a phone", p, over)
		}
		if keep {
			shot(t, ctx, "phone-zh"+strings.ReplaceAll(p, "/", "_"))
		}
	}
}

// TestBrowserAnalystJourney walks an analyst's journey in both languages
// at desktop and phone width: open a thumb-down on the feedback page,
// follow it to the recall, to a memory it demoted, correct the memory and
// see the new version.
func TestBrowserAnalystJourney(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, "sqlite")
	secret, _ := e.key(t, "acme")
	e.seed(t, "acme")
	browserSignIn(t, ctx, e.srv.URL, secret)
	for _, tt := range []struct {
		lang, feedback, saved string
		width, height         int64
	}{
		{"en", "Feedback", "Saved as a new version.", 1280, 800},
		{"zh", "反馈", "已保存为新版本。", 1280, 800},
		{"en", "Feedback", "Saved as a new version.", 390, 844},
		{"zh", "反馈", "已保存为新版本。", 390, 844},
	} {
		name := fmt.Sprintf("%s-%d", tt.lang, tt.width)
		phone := tt.width < 500
		if err := chromedp.Do(ctx,
			chromedp.EmulateViewport(tt.width, tt.height),
			chromedp.Navigate(e.srv.URL+"/console/lang?to="+tt.lang+"&next="+url.QueryEscape("/console/feedback?signal=down")),
			chromedp.WaitVisible(chromedp.CSS("#feedback-list .story")),
		); err != nil {
			t.Fatalf("%s: feedback page: %v", name, err)
		}
		if h := text(t, ctx, "main h1"); h != tt.feedback {
			t.Errorf("%s: the feedback page's heading is %q", name, h)
		}
		if w := eval[string](t, ctx, `getComputedStyle(document.querySelector("main h1")).fontWeight`); w != "700" {
			t.Errorf("%s: the heading's weight is %s", name, w)
		}
		checkFits(t, ctx, name+" feedback")
		if phone {
			if eval[bool](t, ctx, `getComputedStyle(document.querySelector("nav.main")).display !== "none"`) {
				t.Errorf("%s: the nav is open before the menu button is pressed", name)
			}
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("nav-button")), chromedp.WaitVisible(chromedp.CSS(`nav.main a[href="/console/learning"]`))); err != nil {
				t.Fatalf("%s: the menu does not open: %v", name, err)
			}
		}
		shot(t, ctx, name+"-feedback")
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`#feedback-list a.recall-link`)),
			chromedp.WaitVisible(chromedp.ID("injected")),
		); err != nil {
			t.Fatalf("%s: recall page: %v", name, err)
		}
		checkFits(t, ctx, name+" recall")
		shot(t, ctx, name+"-recall")
		href, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`#recall-feedback a.credited-memory`), "href"))
		memURL := href.Value
		if err != nil || memURL == "" {
			t.Fatalf("%s: no memory the thumb-down credited: %v", name, err)
		}
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`#recall-feedback a.credited-memory`)),
			chromedp.WaitVisible(chromedp.ID("memory-content")),
		); err != nil {
			t.Fatalf("%s: memory page: %v", name, err)
		}
		if u := location(t, ctx); !strings.HasSuffix(u, memURL) {
			t.Errorf("%s: followed the credit to %s, want %s", name, u, memURL)
		}
		before := text(t, ctx, "p.badges")
		corrected := "Corrected in the console (" + name + "): the user takes coffee black."
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS("#edit summary")),
			chromedp.WaitVisible(chromedp.ID("edit-content")),
			chromedp.SetValue(chromedp.ID("edit-content"), corrected),
			chromedp.Click(chromedp.ID("edit-save")),
			chromedp.WaitVisible(chromedp.ID("notice")),
		); err != nil {
			t.Fatalf("%s: correcting the memory: %v", name, err)
		}
		if s := text(t, ctx, "#notice"); s != tt.saved {
			t.Errorf("%s: the notice reads %q", name, s)
		}
		if s := text(t, ctx, "#memory-content"); s != corrected {
			t.Errorf("%s: the memory reads %q after the correction", name, s)
		}
		if after := text(t, ctx, "p.badges"); after == before {
			t.Errorf("%s: the version did not change (%q)", name, after)
		}
		if s := text(t, ctx, "#history tbody tr:first-child"); !strings.Contains(s, "Corrected in the console") {
			t.Errorf("%s: the history's newest row is %q", name, s)
		}
		checkFits(t, ctx, name+" memory")
		shot(t, ctx, name+"-memory")
	}
}

// checkFits fails when the page is wider than the window (a phone
// would scroll sideways).
func checkFits(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	if over := eval[int](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 1 {
		t.Errorf("%s is %d px wider than the window", where, over)
	}
}
