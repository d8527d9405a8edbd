package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/server"
)

// TestHealthDetails: /healthz shows what background work reports (a file
// mirror backing off on a full disk) and stays 200 while the store
// answers; the details stay when the store does not.
func TestHealthDetails(t *testing.T) {
	mirror := func() any {
		return map[string]any{"state": "backing_off", "lag": 123, "last_error": "no space left on device"}
	}
	limits := server.Limits{MaxBodyBytes: 1 << 20, MaxJSONDepth: 32, Keys: configs.Default().Limits.KeyLimits()}
	const detail = `"mirror":{"lag":123,"last_error":"no space left on device","state":"backing_off"}`
	for _, tc := range []struct {
		health server.Pinger
		code   int
		status string
	}{{nil, http.StatusOK, `"status":"ok"`}, {failingPinger{}, http.StatusServiceUnavailable, `"status":"unavailable"`}} {
		s, err := server.New(server.Config{Health: tc.health, Limits: limits, HealthDetails: map[string]func() any{"mirror": mirror}})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		body := rec.Body.String()
		if rec.Code != tc.code || !strings.Contains(body, detail) || !strings.Contains(body, tc.status) {
			t.Errorf("healthz = %d %s, want %d with %s and %s", rec.Code, body, tc.code, tc.status, detail)
		}
	}
}
