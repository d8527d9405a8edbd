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
