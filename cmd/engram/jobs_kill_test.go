//go:build unix

package main

import (
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestReflectJobAfterKill: a real engram serve is killed with SIGKILL in
// the middle of a large tenant's reflect job; the next start takes the
// job over once the dead server's lease ran out and runs it to done. What
// it leaves equals an uninterrupted run's: every group reflected once, at
// version 1, with its file — no reflection twice, none half-written.
func TestReflectJobAfterKill(t *testing.T) {
	const groups = 300
	bin := buildEngram(t)
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		const key = "ci-test-key-0123456789"
		settings := func() []string { // a database of its own for each server
			s := []string{"ENGRAM_API_KEY=" + key, "ENGRAM_STORE_DRIVER=" + engine, "ENGRAM_JOBS_INLINE_MAX_MEMORIES=0",
				"ENGRAM_JOBS_LEASE=600ms", "ENGRAM_JOBS_POLL=50ms"}
			if engine == "postgres" {
				s = append(s, "ENGRAM_STORE_DSN="+storetest.Options(t, engine).DSN)
			}
			return s
		}
		env := engramEnv(append(settings(), "ENGRAM_SERVER_LOG_LEVEL=warn")...)
		data := filepath.Join(t.TempDir(), "data")
		start := func() (jobClient, *exec.Cmd) {
			t.Helper()
			url, cmd := startServe(t, bin, data, env)
			return jobClient{t: t, url: url, key: key, client: http.DefaultClient}, cmd
		}

		// The uninterrupted run, on a twin of the tenant.
		twin := boot(t, t.TempDir(), settings())
		ref := jobClient{t: t, url: twin.URL(), key: key, client: http.DefaultClient}
		ref.ingestGroups(0, groups)
		if j := ref.waitJob(ref.reflectJob()); j.Status != engram.JobDone {
			t.Fatalf("uninterrupted run: %+v", j)
		}
		want, wantFiles := ref.reflections(filepath.Join(twin.Config.DataDir, "reflections"))
		if len(want) != groups || wantFiles != groups {
			t.Fatalf("uninterrupted run: %d reflections, %d files, want %d", len(want), wantFiles, groups)
		}

		c, srv := start()
		c.ingestGroups(0, groups)
		id := c.reflectJob()
		var seen engram.Job
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			seen = c.job(id)
			if seen.Progress.Done > 0 || seen.Finished() || time.Now().After(deadline) {
				break
			}
		}
		if err := srv.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = srv.Wait()
		if seen.Status != engram.JobRunning || seen.Progress.Done >= seen.Progress.Total {
			t.Fatalf("the kill did not come mid-way: %+v", seen)
		}

		began := time.Now()
		c, _ = start()
		j := c.waitJob(id)
		t.Logf("killed at %d of %d groups; the restarted server finished the job %s later",
			seen.Progress.Done, seen.Progress.Total, time.Since(began).Round(time.Millisecond))
		if j.Status != engram.JobDone || j.Attempts != 2 || j.Progress != (engram.JobProgress{Done: groups, Total: groups}) {
			t.Fatalf("after the kill: %+v", j)
		}
		got, files := c.reflections(filepath.Join(data, "reflections"))
		if files != groups || len(got) != len(want) {
			t.Fatalf("after the kill: %d reflections, %d files; uninterrupted: %d, %d", len(got), files, len(want), wantFiles)
		}
		for g, v := range want {
			if got[g] != v {
				t.Fatalf("group %s at version %d after the kill, %d uninterrupted", g, got[g], v)
			}
		}
	})
}
