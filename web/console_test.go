package web_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

func TestSignInAndOut(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		secret, _ := e.key(t, "acme")
		c := e.client(t)

		res := c.get("/console/memories?q=x")
		if res.Status != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/console/signin?next=") {
			t.Fatalf("signed out: %d %q, want a redirect to the sign-in page", res.Status, res.Header.Get("Location"))
		}

		form := c.get("/console/signin")
		if again := c.get("/console/signin"); again.csrf(t) != form.csrf(t) {
			t.Error("a second sign-in tab spoils the first one's form")
		}
		res = c.post("/console/signin", url.Values{"key": {secret}})
		if res.Status != http.StatusForbidden {
			t.Errorf("sign-in without its CSRF token: %d, want 403", res.Status)
		}
		res = c.post("/console/signin", url.Values{"csrf": {form.csrf(t)}, "key": {"egk_wrong"}})
		if res.Status != http.StatusUnauthorized || !strings.Contains(res.Body, "unknown or revoked") {
			t.Errorf("wrong key: %d, want 401 with a message", res.Status)
		}
		for _, ck := range res.Header.Values("Set-Cookie") {
			if strings.HasPrefix(ck, "engram_session=") {
				t.Errorf("a wrong key set a session cookie: %s", ck)
			}
		}

		form = c.get("/console/signin")
		res = c.post("/console/signin", url.Values{"csrf": {form.csrf(t)}, "key": {secret}, "next": {"/console/feedback"}})
		if res.Status != http.StatusSeeOther || res.Header.Get("Location") != "/console/feedback" {
			t.Fatalf("sign-in: %d %q", res.Status, res.Header.Get("Location"))
		}
		var cookie string
		for _, ck := range res.Header.Values("Set-Cookie") {
			if strings.HasPrefix(ck, "engram_session=") {
				cookie = ck
			}
		}
		for _, attr := range []string{"HttpOnly", "SameSite=Strict", "Path=/console/"} {
			if !strings.Contains(cookie, attr) {
				t.Errorf("session cookie %q lacks %s", cookie, attr)
			}
		}
		home := c.get("/console/")
		if home.Status != http.StatusOK || !strings.Contains(home.Body, "acme") {
			t.Fatalf("overview: %d", home.Status)
		}
		if res := c.post("/console/signout", url.Values{}); res.Status != http.StatusForbidden {
			t.Errorf("sign-out without CSRF: %d, want 403", res.Status)
		}
		if res := c.get("/console/"); res.Status != http.StatusOK {
			t.Fatalf("a refused sign-out ended the session: %d", res.Status)
		}
		stolen := sessionCookie(t, c)
		if res := c.post("/console/signout", url.Values{"csrf": {home.csrf(t)}}); res.Status != http.StatusSeeOther {
			t.Fatalf("sign-out: %d", res.Status)
		}
		// The old cookie, replayed, no longer works: the session is gone
		// from the store, not only from this browser.
		other := e.client(t)
		other.setCookie(stolen)
		if res := other.get("/console/"); res.Status != http.StatusSeeOther {
			t.Errorf("a signed-out session still opens the console: %d", res.Status)
		}
	})
}

func sessionCookie(t testing.TB, c *client) *http.Cookie {
	u, _ := url.Parse(c.base + "/console/")
	for _, ck := range c.http.Jar.Cookies(u) {
		if ck.Name == "engram_session" {
			return ck
		}
	}
	t.Fatal("no session cookie")
	return nil
}

func (c *client) setCookie(ck *http.Cookie) {
	u, _ := url.Parse(c.base + "/console/")
	c.http.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: ck.Value, Path: "/console/"}})
}

// TestSessionsAcrossServers signs in on one server and uses the session on
// another on the same database; signing out on the second ends it on the
// first, and so does revoking the key.
func TestSessionsAcrossServers(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		a := newEnvOn(t, storetest.OpenWith(t, o))
		b := newEnvOn(t, storetest.OpenWith(t, o))
		secret, keyID := a.key(t, "acme")

		ca := a.client(t)
		csrf := ca.signIn(secret)
		cb := b.client(t)
		cb.setCookie(sessionCookie(t, ca))
		if res := cb.get("/console/memories"); res.Status != http.StatusOK {
			t.Fatalf("the session on the second server: %d", res.Status)
		}
		if res := cb.post("/console/signout", url.Values{"csrf": {csrf}}); res.Status != http.StatusSeeOther {
			t.Fatalf("sign-out on the second server: %d", res.Status)
		}
		if res := ca.get("/console/memories"); res.Status != http.StatusSeeOther {
			t.Errorf("signed out on one server, still signed in on the other: %d", res.Status)
		}

		ca.signIn(secret)
		if err := a.db.RevokeAPIKey(context.Background(), keyID); err != nil {
			t.Fatal(err)
		}
		if res := ca.get("/console/"); res.Status != http.StatusSeeOther {
			t.Errorf("the key was revoked, the session goes on: %d", res.Status)
		}
	})
}

func TestFormWithoutCSRFRefused(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		secret, _ := e.key(t, "acme")
		f := e.seed(t, "acme")
		ctx := e.ctx(t, "acme")
		content := "User drinks coffee with oat milk"
		if _, err := e.db.UpdateMemory(ctx, f.Coffee.ID, engram.MemoryUpdate{Content: &content}); err != nil {
			t.Fatal(err)
		}
		c := e.client(t)
		csrf := c.signIn(secret)
		path := "/console/memories/" + f.Coffee.ID + "/rollback"
		for name, form := range map[string]url.Values{
			"no token":    {"version": {"1"}},
			"wrong token": {"version": {"1"}, "csrf": {csrf + "x"}},
		} {
			res := c.post(path, form)
			if res.Status != http.StatusForbidden || !strings.Contains(res.Body, "CSRF") {
				t.Errorf("%s: %d, want 403", name, res.Status)
			}
		}
		m, err := e.db.FindMemoryByID(ctx, f.Coffee.ID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Content != content {
			t.Fatalf("a refused form rolled the memory back: %q", m.Content)
		}
		shown := strconv.FormatInt(m.Version, 10)
		res := c.post(path, url.Values{"version": {"1"}, "current": {shown}, "csrf": {csrf}})
		if res.Status != http.StatusSeeOther {
			t.Fatalf("rollback: %d %.300s", res.Status, res.Body)
		}
		if after, _ := e.db.FindMemoryByID(ctx, f.Coffee.ID); after.Content != f.Coffee.Content || after.Version != m.Version+1 {
			t.Errorf("after rollback: v%d %q", after.Version, after.Content)
		}
		// A stale page (it showed the version before the rollback) is a conflict.
		if res := c.post(path, url.Values{"version": {"2"}, "current": {shown}, "csrf": {csrf}}); res.Status != http.StatusConflict {
			t.Errorf("rollback from a stale page: %d, want 409", res.Status)
		}
		if res := c.post(path, url.Values{"version": {"x"}, "csrf": {csrf}}); res.Status != http.StatusBadRequest {
			t.Errorf("rollback to version x: %d, want 400", res.Status)
		}
	})
}

func TestPages(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) { testPages(t, engine) })
}

func testPages(t *testing.T, engine string) {
	e := newEnv(t, engine)
	secret, _ := e.key(t, "acme")
	f := e.seed(t, "acme")
	ctx := e.ctx(t, "acme")
	for _, fb := range []engram.FeedbackInput{
		{MemoryID: f.Dentist.ID, Thumb: engram.ThumbUp, Rater: "ann"},
		{MemoryID: f.Dentist.ID, Rating: 5, Rater: "bob"},
		{MemoryID: f.XSS.ID, Thumb: engram.ThumbDown, Rater: "ann", Reason: "wrong"},
	} {
		if _, err := e.feedback.SubmitFeedback(ctx, fb); err != nil {
			t.Fatal(err)
		}
	}
	c := e.client(t)
	csrf := c.signIn(secret)

	want := func(path string, status int, parts ...string) *page {
		t.Helper()
		res := c.get(path)
		if res.Status != status {
			t.Fatalf("GET %s: %d, want %d: %.300s", path, res.Status, status, res.Body)
		}
		for _, p := range parts {
			if !strings.Contains(res.Body, p) {
				t.Errorf("GET %s lacks %q", path, p)
			}
		}
		return res
	}
	want("/console/", 200, "<svg", "preference", `id="stat-live">4<`)
	want("/console/memories?q=coffee", 200, f.Coffee.ID)
	want("/console/memories?q="+url.QueryEscape("绿茶"), 200, f.Tea.ID)
	want("/console/memories?category=life", 200, f.Dentist.ID)
	want("/console/memories?tag=calendar", 200, f.Dentist.ID)
	want("/console/memories?q=zzzznothing", 200, "empty-memories")
	want("/console/memories?cursor=bogus", 400)
	mem := want("/console/memories/"+f.XSS.ID, 200, "&lt;img src=x onerror=")
	if strings.Contains(mem.Body, "<img") {
		t.Error("a memory's markup reached the page as markup")
	}
	want("/console/memories/"+f.Coffee.ID+"?from="+f.Reflection.ID, 200, `id="back-to-reflection"`, "/console/reflections/"+f.Reflection.ID,
		"Preferences: drinks", "origin", "fixture", "score-factors")
	want("/console/memories/mem_unknown", 404)
	refl := want("/console/reflections/"+f.Reflection.ID, 200, "<table>", "<th>memory</th>", `type="checkbox"`,
		"/console/memories/"+f.Coffee.ID+"?from="+f.Reflection.ID, "raw HTML omitted")
	if strings.Contains(refl.Body, "<script>document") || strings.Contains(refl.Body, "scripted") {
		t.Error("the reflection's script reached the page")
	}
	want("/console/reflections?category=preference", 200, f.Reflection.ID)
	want("/console/reflections?category=work", 200, "empty-reflections")
	want("/console/reflections/"+f.Reflection.ID+"?version=9", 404)
	want("/console/feedback", 200, "rater-0", "fixture down")
	want("/console/pairs", 200, "Black, no sugar.", "With milk and two sugars.", "pair-provenance", "regeneration",
		`href="/console/memories/`+f.Coffee.ID+`"`)
	want("/console/pairs?format=trl-unpaired", 200, "completion")
	want("/console/pairs?format=openai", 200, "preferred_output")
	want("/console/pairs?format=csv", 400)
	learn := want("/console/learning", 200)
	promoted, demoted, ok := strings.Cut(learn.Body, `id="demoted"`)
	if !ok || !strings.Contains(promoted, f.Dentist.ID) || strings.Contains(promoted, f.XSS.ID) || !strings.Contains(demoted, f.XSS.ID) {
		t.Error("the learning page does not show the dentist memory promoted and the markup one demoted")
	}
	if !strings.Contains(promoted, "↑2 ↓0") {
		t.Error("the promoted memory's votes are not shown")
	}
	want("/console/playground", 200, "playground-form")
	want("/console/nowhere", 404)

	dl := want("/console/pairs/download?format=trl", 200, `"chosen":"Black, no sugar."`)
	if cd := dl.Header.Get("Content-Disposition"); !strings.Contains(cd, `attachment; filename="engram-acme-trl.jsonl"`) {
		t.Errorf("download disposition %q", cd)
	}

	res := c.post("/console/playground", url.Values{"csrf": {csrf}, "query": {"how does the user take coffee?"}, "budget": {"200"}})
	if res.Status != 200 || !strings.Contains(res.Body, "route-intent") || !strings.Contains(res.Body, f.Coffee.ID) ||
		!strings.Contains(res.Body, "of 200 tokens used") {
		t.Errorf("playground: %d %.400s", res.Status, res.Body)
	}
	for name, form := range map[string]url.Values{
		"empty query": {"csrf": {csrf}, "query": {""}, "budget": {"200"}},
		"big budget":  {"csrf": {csrf}, "query": {"coffee"}, "budget": {"900000"}},
		"nan budget":  {"csrf": {csrf}, "query": {"coffee"}, "budget": {"lots"}},
	} {
		if res := c.post("/console/playground", form); res.Status != http.StatusBadRequest || !strings.Contains(res.Body, "playground-error") {
			t.Errorf("playground, %s: %d", name, res.Status)
		}
	}
}

func TestMemoryPaging(t *testing.T) {
	e := newEnv(t, "sqlite")
	secret, _ := e.key(t, "acme")
	ctx := e.ctx(t, "acme")
	for i := range 30 {
		if _, err := e.db.CreateMemory(ctx, &engram.Memory{Content: fmt.Sprintf("note number %d about tea", i), Category: "work"}); err != nil {
			t.Fatal(err)
		}
	}
	c := e.client(t)
	c.signIn(secret)
	first := c.get("/console/memories?q=tea")
	next := nextPage.FindStringSubmatch(first.Body)
	if first.Status != 200 || next == nil || strings.Count(first.Body, `class="memory-link"`) != 25 {
		t.Fatalf("first page: %d, %d memories, next %v", first.Status, strings.Count(first.Body, `class="memory-link"`), next)
	}
	second := c.get(html.UnescapeString(next[1]))
	if second.Status != 200 || strings.Count(second.Body, `class="memory-link"`) != 5 || nextPage.MatchString(second.Body) {
		t.Errorf("second page: %d, %d memories", second.Status, strings.Count(second.Body, `class="memory-link"`))
	}
	if !strings.Contains(second.Body, "note number 0 about tea") || strings.Contains(second.Body, "note number 29 about tea") {
		t.Error("the second page does not hold the oldest memories")
	}
}

var nextPage = regexp.MustCompile(`href="([^"]+)" id="next-page"`)

func TestEmptyTenantAndChinese(t *testing.T) {
	e := newEnv(t, "sqlite")
	secret, _ := e.key(t, "empty")
	c := e.client(t)
	c.signIn(secret)
	for path, id := range map[string]string{"/console/": "empty-overview", "/console/memories": "empty-memories",
		"/console/reflections": "empty-reflections", "/console/feedback": "empty-feedback", "/console/pairs": "empty-pairs"} {
		if res := c.get(path); res.Status != 200 || !strings.Contains(res.Body, id) {
			t.Errorf("GET %s on an empty tenant: %d, no %s", path, res.Status, id)
		}
	}
	res := c.get("/console/lang?to=zh&next=/console/memories")
	if res.Status != http.StatusSeeOther || res.Header.Get("Location") != "/console/memories" {
		t.Fatalf("language switch: %d %q", res.Status, res.Header.Get("Location"))
	}
	if res := c.get("/console/memories"); !strings.Contains(res.Body, "还没有记忆") || !strings.Contains(res.Body, `lang="zh-CN"`) {
		t.Error("the remembered language is not Chinese")
	}
	if res := c.get("/console/lang?to=en&next=https://evil.example/"); res.Header.Get("Location") != "/console/" {
		t.Errorf("the language switch redirected off the console: %q", res.Header.Get("Location"))
	}

	fresh := e.client(t)
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/console/signin", nil)
	req.Header.Set("Accept-Language", "zh-CN,zh;q=0.9,en;q=0.8")
	r, err := fresh.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	body, _ := io.ReadAll(r.Body)
	if !strings.Contains(string(body), "登录 engram 控制台") {
		t.Error("a Chinese browser does not get the Chinese sign-in page")
	}
}

func TestAdminSwitchesTenants(t *testing.T) {
	e := newEnv(t, "sqlite")
	admin, _ := e.key(t, "default")
	user, _ := e.key(t, "acme")
	e.seed(t, "acme")

	c := e.client(t)
	csrf := c.signIn(admin)
	if res := c.get("/console/"); !strings.Contains(res.Body, `name="tenant"`) {
		t.Fatal("an admin sees no tenant switch")
	}
	if res := c.post("/console/tenant", url.Values{"csrf": {csrf}, "tenant": {"nobody"}}); res.Status != http.StatusNotFound {
		t.Errorf("switch to an unknown tenant: %d", res.Status)
	}
	if res := c.post("/console/tenant", url.Values{"csrf": {csrf}, "tenant": {"acme"}}); res.Status != http.StatusSeeOther {
		t.Fatalf("switch: %d", res.Status)
	}
	if res := c.get("/console/"); !strings.Contains(res.Body, `id="stat-live">4<`) {
		t.Error("after switching, the admin does not see acme's memories")
	}

	u := e.client(t)
	csrf = u.signIn(user)
	if res := u.get("/console/"); strings.Contains(res.Body, `name="tenant"`) {
		t.Error("a tenant's key sees the tenant switch")
	}
	if res := u.post("/console/tenant", url.Values{"csrf": {csrf}, "tenant": {"default"}}); res.Status != http.StatusForbidden {
		t.Errorf("a tenant's key switched tenants: %d", res.Status)
	}
}

func TestStaticAssets(t *testing.T) {
	e := newEnv(t, "sqlite")
	c := e.client(t)
	res := c.get("/console/signin")
	m := assetURL.FindStringSubmatch(res.Body)
	if m == nil {
		t.Fatal("no hashed stylesheet URL on the sign-in page")
	}
	css := c.get(m[1])
	if css.Status != 200 || !strings.Contains(css.Header.Get("Cache-Control"), "immutable") || css.Header.Get("ETag") == "" {
		t.Errorf("stylesheet: %d %v", css.Status, css.Header)
	}
	if res := c.get("/console/static/console.css"); res.Status != 404 {
		t.Errorf("an unhashed asset name: %d", res.Status)
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
}

var assetURL = regexp.MustCompile(`href="(/console/static/console\.[0-9a-f]+\.css)"`)
