//go:build unix

package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	_ "github.com/mattn/go-sqlite3"
)

// A real engram serve with feedback.async on acknowledges feedback (202)
// once it is committed as pending, and is killed with SIGKILL while
// clients still post: the next start applies every acknowledged feedback
// (and any committed whose answer the kill cut off), each exactly once.
func TestAsyncFeedbackAfterKill(t *testing.T) {
	bin := buildEngram(t)
	data := filepath.Join(t.TempDir(), "data")
	const key = "ci-test-key-0123456789"
	env := engramEnv("ENGRAM_API_KEY="+key, "ENGRAM_FEEDBACK_ASYNC=true", "ENGRAM_SERVER_LOG_LEVEL=warn")
	start := func() (string, *exec.Cmd) {
		t.Helper()
		return startServe(t, bin, data, env)
	}
	var killed atomic.Bool
	post := func(url, path, body string, want int) map[string]any {
		req, _ := http.NewRequest("POST", url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			if !killed.Load() {
				t.Error(err)
			}
			return nil
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != want && !killed.Load() {
			t.Errorf("POST %s: %d %v, want %d", path, resp.StatusCode, out, want)
		}
		return out
	}
	count := func(q string) int {
		t.Helper()
		db, err := sql.Open("sqlite3", "file:"+filepath.Join(data, "engram.db")+"?_query_only=true&_busy_timeout=5000")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	url, srv := start()
	m := post(url, "/v1/memories", `{"content":"The user sails on Sundays","category":"life"}`, http.StatusCreated)
	memID := m["memory"].(map[string]any)["id"].(string)
	// Clients post until the server is killed, mid-stream, once killAt
	// feedbacks were acknowledged.
	const killAt, clients = 150, 8
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := c; !killed.Load(); i += clients {
				out := post(url, "/v1/feedback", fmt.Sprintf(`{"memory_id":%q,"thumb":"up","rater":"r%d"}`, memID, i), http.StatusAccepted)
				if id, ok := out["feedback_id"].(string); ok && out["status"] == "pending" {
					mu.Lock()
					acked = append(acked, id)
					if len(acked) == killAt && killed.CompareAndSwap(false, true) {
						_ = srv.Process.Kill()
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	_ = srv.Wait()
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("killed mid-stream with %d of %d acknowledged feedbacks pending", count(`SELECT COUNT(*) FROM feedback_pending`), len(acked))

	start()
	waitFor(t, func() bool { return count(`SELECT COUNT(*) FROM feedback_pending`) == 0 })
	n := count(`SELECT COUNT(*) FROM feedback`)
	if n < len(acked) {
		t.Fatalf("%d feedback rows after the restart, %d acknowledged", n, len(acked))
	}
	for _, id := range acked {
		if got := count(fmt.Sprintf(`SELECT COUNT(*) FROM feedback WHERE id = '%s'`, id)); got != 1 {
			t.Fatalf("acknowledged feedback %s applied %d times", id, got)
		}
	}
	if got := count(fmt.Sprintf(`SELECT up_count FROM memories WHERE id = '%s'`, memID)); got != n {
		t.Fatalf("up_count %d, want %d (one per feedback row)", got, n)
	}
}
