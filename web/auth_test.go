package web_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/peer"
	"github.com/engram-memory/engram/internal/ratelimit"
	"github.com/engram-memory/engram/store/storetest"
	"github.com/engram-memory/engram/web"
)

// TestSignInSlowed: after failure_burst wrong keys from one address the
// sign-in answers 429 with Retry-After before checking the key, the
// right key included; a success costs nothing.
func TestSignInSlowed(t *testing.T) {
	failures := ratelimit.New(3, time.Minute, 100, nil)
	e := newEnvOn(t, storetest.Open(t, "sqlite"), func(c *web.Config) { c.Failures = failures })
	secret, _ := e.key(t, "acme")
	c := e.client(t)
	for range 5 {
		c.signIn(secret)
	}
	for i := range 3 {
		form := c.get("/console/signin")
		if res := c.post("/console/signin", url.Values{"csrf": {form.csrf(t)}, "key": {"egk_wrong"}}); res.Status != http.StatusUnauthorized {
			t.Fatalf("wrong key %d: %d", i, res.Status)
		}
	}
	form := c.get("/console/signin")
	res := c.post("/console/signin", url.Values{"csrf": {form.csrf(t)}, "key": {secret}})
	if res.Status != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "60" || !strings.Contains(res.Body, "Too many failed sign-ins") {
		t.Fatalf("after the burst: %d, Retry-After %q", res.Status, res.Header.Get("Retry-After"))
	}
	for _, ck := range res.Header.Values("Set-Cookie") {
		if strings.HasPrefix(ck, "engram_session=") {
			t.Errorf("a slowed sign-in set a session cookie: %s", ck)
		}
	}
}

// TestCookieSecure: the console's cookies are Secure when the request
// came over TLS, its own or a trusted proxy's (the server says so in
// peer.Info), and not otherwise.
func TestCookieSecure(t *testing.T) {
	e := newEnvOn(t, storetest.Open(t, "sqlite"))
	for _, tc := range []struct {
		name   string
		tls    bool
		info   *peer.Info
		secure bool
	}{
		{"plain", false, nil, false},
		{"own TLS", true, nil, true},
		{"trusted proxy said https", false, &peer.Info{Addr: "198.51.100.7", TLS: true}, true},
		{"server saw no TLS", false, &peer.Info{Addr: "198.51.100.7"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/console/signin", nil)
			if tc.tls {
				req.TLS = &tls.ConnectionState{}
			}
			if tc.info != nil {
				req = req.WithContext(peer.NewContext(context.Background(), *tc.info))
			}
			rec := httptest.NewRecorder()
			e.console.ServeHTTP(rec, req)
			cookies := rec.Result().Cookies()
			if len(cookies) == 0 {
				t.Fatalf("no cookie: %d", rec.Code)
			}
			for _, ck := range cookies {
				if ck.Secure != tc.secure {
					t.Errorf("cookie %s: Secure %v, want %v", ck.Name, ck.Secure, tc.secure)
				}
			}
		})
	}
}
