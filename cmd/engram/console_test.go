package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestConsoleMounted signs in to the console of the real server with the
// generated key, behind the server's middleware.
func TestConsoleMounted(t *testing.T) {
	m := boot(t, t.TempDir(), nil)
	secret, err := os.ReadFile(filepath.Join(m.Config.DataDir, "api_key"))
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	get := func(path string) (int, string, *http.Response) {
		res, err := c.Get(m.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), res
	}
	status, body, res := get("/console")
	if status != http.StatusOK || !strings.HasSuffix(res.Request.URL.Path, "/console/signin") || res.Header.Get("X-Request-ID") == "" {
		t.Fatalf("GET /console: %d at %s", status, res.Request.URL)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if csrf == nil {
		t.Fatal("no CSRF token on the sign-in page")
	}
	res, err = c.PostForm(m.URL()+"/console/signin", url.Values{"csrf": {csrf[1]}, "key": {strings.TrimSpace(string(secret))}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(b), `id="stat-live"`) {
		t.Fatalf("sign-in with the generated key: %d at %s", res.StatusCode, res.Request.URL)
	}
	if !strings.Contains(string(b), `name="tenant"`) {
		t.Error("the default tenant's key is not the console's admin")
	}
}

// TestConsoleReflectJob: the console of a real server regenerates a large
// tenant's reflection as a job, which the server's runner does, and the
// job's page shows it done, as GET /v1/jobs/{id} does.
func TestConsoleReflectJob(t *testing.T) {
	m := boot(t, t.TempDir(), []string{"ENGRAM_JOBS_INLINE_MAX_MEMORIES=3"})
	raw, err := os.ReadFile(filepath.Join(m.Config.DataDir, "api_key"))
	if err != nil {
		t.Fatal(err)
	}
	secret := strings.TrimSpace(string(raw))
	for _, text := range []string{"Ada drinks oolong tea every morning", "Ada buys tea leaves in Taipei",
		"Ada brews tea at 85 degrees", "Ada keeps her tea in a tin", "Ada prefers tea without sugar"} {
		if status, _, b := call(t, m, "POST", "/v1/memories", secret, "application/json", `{"content":"`+text+`","category":"preference"}`); status != http.StatusCreated {
			t.Fatalf("remember: %d %s", status, b)
		}
	}
	// The first reflect, through the API, is a job too: wait for it.
	status, _, b := call(t, m, "POST", "/v1/reflect", secret, "application/json", `{}`)
	job := regexp.MustCompile(`"job_id":"(job_[a-z0-9]+)"`).FindStringSubmatch(b)
	if status != http.StatusAccepted || job == nil {
		t.Fatalf("POST /v1/reflect: %d %s", status, b)
	}
	waitFor(t, func() bool {
		_, _, b := call(t, m, "GET", "/v1/jobs/"+job[1], secret, "", "")
		return strings.Contains(b, `"status":"done"`)
	})
	_, _, b = call(t, m, "GET", "/v1/reflections", secret, "", "")
	ref := regexp.MustCompile(`"id":"(refl_[a-z0-9]+)"`).FindStringSubmatch(b)
	if ref == nil {
		t.Fatalf("no reflection: %s", b)
	}

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	page := func(res *http.Response, err error) (int, string, string) {
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header.Get("Location"), string(b)
	}
	token := regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	_, _, body := page(c.Get(m.URL() + "/console/signin"))
	if status, _, _ := page(c.PostForm(m.URL()+"/console/signin", url.Values{"csrf": {token.FindStringSubmatch(body)[1]}, "key": {secret}})); status != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", status)
	}
	_, _, body = page(c.Get(m.URL() + "/console/reflections/" + ref[1]))
	status, loc, _ := page(c.PostForm(m.URL()+"/console/reflections/"+ref[1]+"/regenerate", url.Values{"csrf": {token.FindStringSubmatch(body)[1]}}))
	if status != http.StatusSeeOther || !strings.HasPrefix(loc, "/console/jobs/job_") {
		t.Fatalf("regenerate: %d %q", status, loc)
	}
	waitFor(t, func() bool {
		_, _, body = page(c.Get(m.URL() + loc))
		return strings.Contains(body, `data-status="done"`)
	})
	if !strings.Contains(body, `id="job-outcome"`) || strings.Contains(body, `http-equiv="refresh"`) {
		t.Errorf("the done job's page: %.800s", body)
	}
}
