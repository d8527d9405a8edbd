//go:build unix

package main

import (
	"database/sql"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

// The file mirror of a real engram serve, killed with SIGKILL while it
// works on a tenant (here: waiting for the tenant's lock, which engram
// mirror rebuild would hold), catches up within seconds of the next start:
// the dead process's lease runs out in seconds, not a minute. Stopped
// cleanly (SIGTERM) instead, it leaves no lease at all. Meanwhile /healthz
// and /metrics show the mirror.
func TestMirrorAfterKill(t *testing.T) {
	bin := buildEngram(t)
	data := filepath.Join(t.TempDir(), "data")
	const key = "ci-test-key-0123456789"
	env := engramEnv("ENGRAM_API_KEY="+key, "ENGRAM_MIRROR_POLL=50ms", "ENGRAM_MIRROR_MIN_FREE_BYTES=0", "ENGRAM_SERVER_LOG_LEVEL=warn")
	start := func() (string, *exec.Cmd) {
		t.Helper()
		return startServe(t, bin, data, env)
	}
	put := func(url, name string) {
		t.Helper()
		req, _ := http.NewRequest("PUT", url+"/v1/keys/notes/"+name, strings.NewReader(`{"content":"`+name+`","source":"test"}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("PUT %s: %d", name, resp.StatusCode)
		}
	}
	get := func(url string) string {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	mirrored := func(name string) bool {
		_, err := os.Stat(filepath.Join(data, "mirror", "default", "index", "notes", name+".json"))
		return err == nil
	}
	// lease returns who holds a lease on the mirror's cursor, "" for none.
	lease := func() string {
		t.Helper()
		db, err := sql.Open("sqlite3", "file:"+filepath.Join(data, "engram.db")+"?_query_only=true&_busy_timeout=5000")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var holder string
		if err := db.QueryRow(`SELECT COALESCE(MAX(holder), '') FROM feed_cursors WHERE consumer = 'mirror' AND leased_until IS NOT NULL`).Scan(&holder); err != nil {
			t.Fatal(err)
		}
		return holder
	}
	// lockTenant takes the tenant's mirror lock, as engram mirror rebuild
	// does, and returns its release.
	lockTenant := func() func() {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(data, "mirror", ".default.lock"), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); _ = f.Close() }
	}
	waitLease := func(held bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); (lease() != "") != held; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the mirror's lease held: %q, want held %v", lease(), held)
			}
		}
	}

	url, srv := start()
	put(url, "one")
	waitFor(t, func() bool { return mirrored("one") })
	if h := get(url + "/healthz"); !strings.Contains(h, `"status":"ok"`) || !strings.Contains(h, `"mirror":{"state":"ok"`) {
		t.Fatalf("healthz: %s", h)
	}
	m := get(url + "/metrics")
	for _, name := range []string{"engram_mirror_lag_events", "engram_mirror_errors_total 0", "engram_mirror_backoff_seconds 0", "engram_mirror_tenants_over_budget 0"} {
		if !strings.Contains(m, name) {
			t.Fatalf("/metrics lacks %s", name)
		}
	}

	// kill -9 while the mirror holds the tenant.
	unlock := lockTenant()
	put(url, "two")
	waitLease(true)
	if err := srv.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = srv.Wait()
	unlock()
	if lease() == "" {
		t.Fatal("the killed process left no lease: the test did not kill it mid-step")
	}
	began := time.Now()
	url, srv = start()
	for !mirrored("two") {
		if time.Since(began) > 10*time.Second {
			t.Fatal("after kill -9 the mirror did not catch up within 10 s (the dead process's lease)")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("caught up %s after the restart that followed kill -9", time.Since(began).Round(time.Millisecond))

	// SIGTERM while the mirror holds the tenant: the lease is released.
	unlock = lockTenant()
	put(url, "three")
	waitLease(true)
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
	unlock()
	if h := lease(); h != "" {
		t.Fatalf("a cleanly stopped server left its lease (%s)", h)
	}
	url, _ = start()
	waitFor(t, func() bool { return mirrored("three") })
}
