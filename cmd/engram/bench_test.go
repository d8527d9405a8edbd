package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/bench"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/store/storetest"
)

// TestLoadHarness: a short load on one and on two servers sharing one
// database (each engine) answers every create, recall and feedback —
// feedback on two servers mostly names a recall the other server made —
// and prints a row per kind.
func TestLoadHarness(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		environ := []string{"ENGRAM_STORE_DRIVER=" + engine}
		if engine == "postgres" {
			environ = append(environ, "ENGRAM_STORE_DSN="+os.Getenv(storetest.PostgresEnv))
		}
		cfg, err := configs.Load("", environ)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		opt := bench.LoadOptions{Clients: 6, Duration: 1500 * time.Millisecond, Seed: 50}
		if err := runLoad(context.Background(), cfg, t.TempDir(), []int{1, 2}, true, opt, &out); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.String(), "error (") {
			t.Errorf("errors under load:\n%s", out.String())
		}
		for _, want := range []string{"| " + engine + " | 1 | 6 |  | feedback |", "| " + engine + " | 2 | 6 |  | recall |"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("no %q in\n%s", want, out.String())
			}
		}
		// Feedback alone: every request a thumb, every one answered 201.
		out.Reset()
		opt.FeedbackOnly = true
		if err := runLoad(context.Background(), cfg, t.TempDir(), []int{2}, false, opt, &out); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.String(), "error (") || strings.Contains(out.String(), "| recall |") || strings.Contains(out.String(), "| create |") {
			t.Errorf("feedback alone:\n%s", out.String())
		}
		if !strings.Contains(out.String(), "| "+engine+" | 2 | 6 |  | feedback |") {
			t.Errorf("no feedback row in\n%s", out.String())
		}
	})
}

// TestUsersHarness: a small users run (each engine) seeds its tenants,
// answers every recall over HTTP on two fresh servers one after the other,
// and prints its figures and the server's memory.
func TestUsersHarness(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		environ := []string{"ENGRAM_STORE_DRIVER=" + engine}
		if engine == "postgres" {
			environ = append(environ, "ENGRAM_STORE_DSN="+os.Getenv(storetest.PostgresEnv))
		}
		cfg, err := configs.Load("", environ)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		opt := bench.UsersOptions{Users: 30, PerUser: 4, Tenants: 6, PerTenant: 5, Sample: 3, Rounds: 2, Budget: 500, Seed: 1}
		if err := runUsers(context.Background(), cfg, t.TempDir(), opt, &out); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{engine + ": 30 users × 4 memories", "| warm recall of a user in the big tenant (30 users × 4) | 6 |",
			"| first recall of a user in the warm big tenant | 2 |", "| fresh server: first recall of a tenant holding one user | 3 |",
			"| fresh server, after its preload: first recall of a user in the big tenant | 3 |",
			"warm p99, big tenant / alone:", "| all 6 small tenants warmed |",
			"| recall of a user in the big tenant after all small tenants warmed | 3 |"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("no %q in\n%s", want, out.String())
			}
		}
	})
}
