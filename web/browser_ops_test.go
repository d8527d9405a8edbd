package web_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/engram-memory/engram"
)

// acceptDialogs accepts every JavaScript dialog the tab opens (the
// console's confirm before a release) and returns what they said so far.
func acceptDialogs(t *testing.T, ctx context.Context) func() []string {
	t.Helper()
	var mu sync.Mutex
	var said []string
	opening := chromedp.Events(ctx, cdppage.JavascriptDialogOpening)
	go func() {
		for ev, err := range opening {
			if err != nil {
				return
			}
			mu.Lock()
			said = append(said, ev.Message)
			mu.Unlock()
			// The answer is a command: sent from another goroutine than
			// the one reading the events.
			go func() {
				_ = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
					_, err := cdp.Call(ctx, tg, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: true})
					return err
				}))
			}()
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), said...)
	}
}

// TestBrowserQuarantine: an analyst filters the quarantined memories,
// opens one, reads the gate's rule, confirms and releases it; a memory
// that is not quarantined has no button; the page reads in Chinese.
func TestBrowserQuarantine(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, "sqlite")
	secret, _ := e.key(t, "acme")
	mctx := e.ctx(t, "acme")
	mk := func(m *engram.Memory) *engram.Memory {
		res, err := e.db.CreateMemory(mctx, m)
		if err != nil {
			t.Fatal(err)
		}
		return res.Memory
	}
	thanks := mk(&engram.Memory{Content: "Thanks, sounds good!", Category: "life", Quarantined: true})
	meeting := mk(&engram.Memory{Content: "昨天用户把会议改到了下午。", Category: "work", Quarantined: true})
	plain := mk(&engram.Memory{Content: "Maya Ruiz moved to Lisbon in March 2026", Category: "life"})
	dialogs := acceptDialogs(t, ctx)
	browserSignIn(t, ctx, e.srv.URL, secret)

	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.srv.URL+"/console/memories"),
		chromedp.WaitVisible(chromedp.ID("memory-list")),
		chromedp.Click(chromedp.ID("filter-quarantined")),
		chromedp.Click(chromedp.ID("search")),
		chromedp.WaitVisible(chromedp.ID("filter-clear")),
	); err != nil {
		t.Fatal(err)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#memory-list tbody tr").length`); n != 2 {
		t.Errorf("the quarantined filter lists %d memories, want 2", n)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#memory-list a[href="/console/memories/`+thanks.ID+`"]`)),
		chromedp.WaitVisible(chromedp.ID("release")),
	); err != nil {
		t.Fatal(err)
	}
	if rule := text(t, ctx, "#gate-rule"); !strings.HasPrefix(rule, "durable:") {
		t.Errorf("the gate's rule reads %q", rule)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("release")),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)),
	); err != nil {
		t.Fatal(err)
	}
	if got := dialogs(); len(got) != 1 || got[0] != "Let this memory into recall?" {
		t.Errorf("dialogs: %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#release, #quarantine, #quarantined").length`); n != 0 {
		t.Error("the released memory still shows its quarantine")
	}
	if m, err := e.db.FindMemoryByID(mctx, thanks.ID); err != nil || m.Quarantined || m.Archived {
		t.Fatalf("after release: %+v %v", m, err)
	}

	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.srv.URL+"/console/memories/"+plain.ID),
		chromedp.WaitVisible(chromedp.ID("memory-content")),
	); err != nil {
		t.Fatal(err)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#release").length`); n != 0 {
		t.Error("a memory that is not quarantined shows the release button")
	}

	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.srv.URL+"/console/lang?to=zh&next=/console/memories/"+meeting.ID),
		chromedp.WaitVisible(chromedp.ID("release")),
	); err != nil {
		t.Fatal(err)
	}
	if b := text(t, ctx, "#release"); b != "放行" {
		t.Errorf("the Chinese release button reads %q", b)
	}
	if rule := text(t, ctx, "#gate-rule"); !strings.HasPrefix(rule, "self_contained:") || !strings.Contains(rule, "昨天") {
		t.Errorf("the Chinese page's rule reads %q", rule)
	}
}

// TestBrowserRegenerateJob: on a large tenant Regenerate goes to the
// job's page, which reloads itself until a runner has done the job, then
// shows the outcome and links back to the reflection; in Chinese too.
func TestBrowserRegenerateJob(t *testing.T) {
	ctx := tab(t)
	e, js := jobsEnv(t, "sqlite", 5)
	secret, _ := e.key(t, "globex")
	f := e.seed(t, "globex")
	mctx := e.ctx(t, "globex")
	for _, s := range []string{"User takes oat milk in coffee", "User drinks espresso after lunch", "User prefers coffee beans from Ethiopia"} {
		if _, err := e.db.CreateMemory(mctx, &engram.Memory{Content: s, Category: "preference"}); err != nil {
			t.Fatal(err)
		}
	}
	browserSignIn(t, ctx, e.srv.URL, secret)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.srv.URL+"/console/reflections/"+f.Reflection.ID),
		chromedp.WaitVisible(chromedp.CSS("#regenerate button")),
		chromedp.Click(chromedp.CSS("#regenerate button")),
		chromedp.WaitVisible(chromedp.ID("job")),
	); err != nil {
		t.Fatal(err)
	}
	if s := eval[string](t, ctx, `document.getElementById("job").dataset.status`); s != engram.JobQueued {
		t.Errorf("the job's page shows %q, want queued", s)
	}
	if ran, err := js.RunOne(context.Background()); !ran || err != nil {
		t.Fatalf("runner: %v %v", ran, err)
	}
	// No click: the page reloads itself until the job is done.
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.ID("job-outcome")),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#job-count"); !strings.Contains(s, " of ") {
		t.Errorf("progress reads %q", s)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#job-outcome a")),
		chromedp.WaitVisible(chromedp.ID("reflection-body")),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "p.notice"); !strings.Contains(s, "Regenerated") {
		t.Errorf("the reflection's notice reads %q", s)
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.srv.URL+"/console/lang?to=zh&next=/console/reflections/"+f.Reflection.ID),
		chromedp.WaitVisible(chromedp.ID("reflection-body")),
	); err != nil {
		t.Fatal(err)
	}
	if b := text(t, ctx, "#regenerate button"); b != "重新生成" {
		t.Errorf("the Chinese regenerate button reads %q", b)
	}
}

// TestBrowserEmotionFactor: a felt memory's score breakdown shows the
// emotion row, 1 + 0.05 × its emotion, in English and Chinese.
func TestBrowserEmotionFactor(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, "sqlite")
	secret, _ := e.key(t, "acme")
	felt := 0.8
	res, err := e.db.CreateMemory(e.ctx(t, "acme"), &engram.Memory{Content: "I hate waiting in long queues at the airport", Category: "preference", Emotion: &felt})
	if err != nil {
		t.Fatal(err)
	}
	browserSignIn(t, ctx, e.srv.URL, secret)
	row := `#score-factors li.factor[data-key="factor.emotion"]`
	for lang, name := range map[string]string{"en": "Emotion", "zh": "情感"} {
		if err := chromedp.Do(ctx,
			chromedp.Navigate(e.srv.URL+"/console/lang?to="+lang+"&next=/console/memories/"+res.Memory.ID),
			chromedp.WaitVisible(chromedp.CSS(row)),
		); err != nil {
			t.Fatal(err)
		}
		if got := text(t, ctx, row+" .fname"); got != name {
			t.Errorf("%s: the emotion row is named %q", lang, got)
		}
		if got := text(t, ctx, row+" .fval"); got != "1.040" {
			t.Errorf("%s: the emotion factor reads %q, want 1.040", lang, got)
		}
	}
}
