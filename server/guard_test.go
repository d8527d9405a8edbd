package server_test

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/internal/peer"
	"github.com/engram-memory/engram/internal/ratelimit"
	"github.com/engram-memory/engram/server"
	"github.com/engram-memory/engram/store/storetest"
)

// guardEnv is a server with a failure limiter, the proxy 10.0.0.1
// trusted, and stubs at /console (it answers the peer.Info it was given)
// and /mcp (401 without the right key, as the MCP handler does).
func guardEnv(t *testing.T, failures *ratelimit.Limiter) (*env, string) {
	t.Helper()
	db := storetest.Open(t, "sqlite")
	lim := configs.Default().Limits
	console := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := peer.FromRequest(r)
		w.Header().Set("X-Addr", info.Addr)
		if info.TLS {
			w.Header().Set("X-TLS", "yes")
		}
	})
	e := &env{db: db}
	secret, _ := e.tenant(t, "alpha")
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+secret {
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
	s, err := server.New(server.Config{
		Memories: db, Auth: db, Health: db, Console: console, MCP: mcp, Failures: failures,
		TrustedProxies: []string{"10.0.0.1"},
		Limits:         server.Limits{MaxBodyBytes: 1 << 20, MaxJSONDepth: 32, MaxBatch: lim.MaxBatch, Keys: lim.KeyLimits()},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.h = s
	return e, secret
}

// from serves a request from the TCP peer remote.
func (e *env) from(t *testing.T, remote, method, path, key string, headers ...string) *response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	req.RemoteAddr = remote + ":4321"
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	setHeaders(req.Header, headers)
	return e.serve(t, req)
}

// TestBadKeysSlowed: after failure_burst bad bearer keys (REST and MCP
// together) an address is answered 429 with Retry-After before its key
// is checked (the right key too); other addresses, requests without a
// key and successes are not slowed; X-Forwarded-For counts only from a
// trusted proxy; the address may try again once the bucket refills.
func TestBadKeysSlowed(t *testing.T) {
	now := time.Unix(1000, 0)
	e, secret := guardEnv(t, ratelimit.New(3, 30*time.Second, 100, func() time.Time { return now }))
	for range 20 {
		wantStatus(t, e.from(t, "192.0.2.1", "GET", "/v1/memories", secret), http.StatusOK)
		wantError(t, e.from(t, "192.0.2.1", "GET", "/v1/memories", ""), 401, engram.EUNAUTHORIZED)
	}
	wantError(t, e.from(t, "192.0.2.1", "GET", "/v1/memories", "egk_guess1"), 401, engram.EUNAUTHORIZED)
	wantStatus(t, e.from(t, "192.0.2.1", "POST", "/mcp", "egk_guess2"), http.StatusUnauthorized)
	// An untrusted client's X-Forwarded-For is not believed: still 192.0.2.1.
	wantError(t, e.from(t, "192.0.2.1", "GET", "/v1/memories", "egk_guess3", "X-Forwarded-For", "198.51.100.7"), 401, engram.EUNAUTHORIZED)
	for _, path := range []string{"/v1/memories", "/mcp"} {
		r := e.from(t, "192.0.2.1", "GET", path, secret)
		wantError(t, r, 429, engram.ERATELIMITED)
		if r.Header.Get("Retry-After") != "30" {
			t.Errorf("%s: Retry-After %q, want 30", path, r.Header.Get("Retry-After"))
		}
	}
	wantStatus(t, e.from(t, "192.0.2.2", "GET", "/v1/memories", secret), http.StatusOK)
	// Behind the trusted proxy, the forwarded address counts.
	wantStatus(t, e.from(t, "10.0.0.1", "GET", "/v1/memories", secret, "X-Forwarded-For", "198.51.100.7"), http.StatusOK)
	wantError(t, e.from(t, "10.0.0.1", "GET", "/v1/memories", secret, "X-Forwarded-For", "192.0.2.1"), 429, engram.ERATELIMITED)
	now = now.Add(30 * time.Second)
	wantStatus(t, e.from(t, "192.0.2.1", "GET", "/v1/memories", secret), http.StatusOK)
	wantError(t, e.from(t, "192.0.2.1", "GET", "/v1/memories", "egk_guess4"), 401, engram.EUNAUTHORIZED)
	wantError(t, e.from(t, "192.0.2.1", "GET", "/v1/memories", secret), 429, engram.ERATELIMITED)
}

// TestPeerInfo: the console learns the client address and whether it
// came over TLS: its own TLS, or X-Forwarded-Proto: https from a trusted
// proxy; an untrusted client's X-Forwarded-Proto and X-Forwarded-For are
// ignored.
func TestPeerInfo(t *testing.T) {
	e, _ := guardEnv(t, nil)
	for _, tc := range []struct {
		name, remote string
		tls          bool
		headers      []string
		addr         string
		secure       bool
	}{
		{"plain", "192.0.2.1", false, nil, "192.0.2.1", false},
		{"own TLS", "192.0.2.1", true, nil, "192.0.2.1", true},
		{"untrusted proxy headers", "192.0.2.1", false, []string{"X-Forwarded-Proto", "https", "X-Forwarded-For", "198.51.100.7"}, "192.0.2.1", false},
		{"trusted proxy, https", "10.0.0.1", false, []string{"X-Forwarded-Proto", "https", "X-Forwarded-For", "198.51.100.7"}, "198.51.100.7", true},
		{"trusted proxy, http", "10.0.0.1", false, []string{"X-Forwarded-Proto", "http", "X-Forwarded-For", "198.51.100.7"}, "198.51.100.7", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/console/signin", nil)
			req.RemoteAddr = tc.remote + ":4321"
			if tc.tls {
				req.TLS = &tls.ConnectionState{}
			}
			setHeaders(req.Header, tc.headers)
			r := e.serve(t, req)
			if got := r.Header.Get("X-Addr"); got != tc.addr {
				t.Errorf("address %q, want %q", got, tc.addr)
			}
			if secure := r.Header.Get("X-TLS") == "yes"; secure != tc.secure {
				t.Errorf("TLS %v, want %v", secure, tc.secure)
			}
		})
	}
}
