package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram/mcp/mcptest"
	"github.com/engram-memory/engram/store/storetest"
)

// raceBuild is true when the tests run with the race detector
// (race_test.go); the binary is then built with it too, which reuses the
// packages the test build compiled.
var raceBuild bool

// buildEngram builds cmd/engram into a temporary directory.
func buildEngram(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "engram")
	args := []string{"build", "-tags", "sqlite_fts5", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startServe starts `engram serve` on a free port of 127.0.0.1 with data
// as its data directory, reads its first line for the address and
// returns the base URL; the process is killed when the test ends (the
// crash tests kill it sooner).
func startServe(t *testing.T, bin, data string, env []string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", data)
	cmd.Env, cmd.Stderr = env, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "engram listening on http://") {
		t.Fatalf("serve printed %q (%v)", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	return strings.TrimSpace(strings.TrimPrefix(line, "engram listening on ")), cmd
}

// engramEnv is the environment without the caller's ENGRAM_* settings,
// with exploration off, plus extra. Exploration holds back a random one
// of a recall's best memories in a few percent of recalls (learning.explore),
// and the scenarios assert which memories a recall injects.
func engramEnv(extra ...string) []string {
	env := []string{"ENGRAM_LEARNING_EXPLORE=0"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ENGRAM_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// spawnMCP starts `engram mcp` as an MCP client does and connects the
// SDK's client to it over stdio. Closing the session closes the process's
// stdin, which must end it cleanly.
func spawnMCP(t *testing.T, bin, data string, env []string) *mcptest.Client {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "stderr.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "mcp", "--data", data)
	cmd.Env, cmd.Stderr = env, logFile
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "engram-test", Version: "1"}, nil).
		Connect(context.Background(), &sdk.CommandTransport{Command: cmd, TerminateDuration: time.Minute}, nil)
	if err != nil {
		t.Fatalf("connect to engram mcp: %v", err)
	}
	t.Cleanup(func() {
		err := cs.Close()
		logFile.Close()
		log, _ := os.ReadFile(logPath)
		if err != nil || cmd.ProcessState.ExitCode() != 0 || !bytes.Contains(log, []byte(`msg="engram mcp stopped" reason="stdin closed"`)) {
			t.Errorf("engram mcp did not stop cleanly when its stdin closed: %v\n%s", err, log)
		}
	})
	return mcptest.NewClient(t, cs)
}

// TestMCPStdio runs the MCP scenario against the built binary, spawned
// as an MCP client spawns it, on both engines: one process with tenant
// acme's key (ENGRAM_API_KEY), one without a key, acting for the default
// tenant, both on one database. Then the key rules of engram mcp.
func TestMCPStdio(t *testing.T) {
	bin := buildEngram(t)
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		data := t.TempDir()
		env := engramEnv("ENGRAM_SERVER_LOG_LEVEL=info")
		if engine == "postgres" {
			env = append(env, "ENGRAM_STORE_DRIVER=postgres", "ENGRAM_STORE_DSN="+storetest.Options(t, engine).DSN)
		}
		keys := exec.Command(bin, "keys", "create", "--tenant", "acme", "--data", data)
		keys.Env = env
		key, err := keys.Output()
		if err != nil {
			t.Fatalf("keys create: %v", err)
		}
		acme := spawnMCP(t, bin, data, append(env, "ENGRAM_API_KEY="+strings.TrimSpace(string(key))))
		mcptest.Scenario(t, acme, spawnMCP(t, bin, data, env))
	})
	t.Run("keys", func(t *testing.T) { testMCPStdioKeys(t, bin) })
}

// testMCPStdioKeys: a configured key the store does not know becomes the
// default tenant's, as on serve; a revoked key stops engram mcp before it
// serves anything.
func testMCPStdioKeys(t *testing.T, bin string) {
	data := t.TempDir()
	run := func(key string, args ...string) (string, string, int) {
		cmd := exec.Command(bin, args...) // stdin: empty, so mcp serves nothing and stops
		cmd.Env = engramEnv("ENGRAM_SERVER_LOG_LEVEL=warn")
		if key != "" {
			cmd.Env = append(cmd.Env, "ENGRAM_API_KEY="+key)
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		_ = cmd.Run()
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}
	secret := "stdio-test-key-0123456789"
	if _, stderr, code := run(secret, "mcp", "--data", data); code != 0 {
		t.Fatalf("engram mcp with a new key: exit %d: %s", code, stderr)
	}
	list, _, _ := run("", "keys", "list", "--data", data)
	if !strings.Contains(list, "default") || !strings.Contains(list, "configured") {
		t.Fatalf("the configured key was not imported for the default tenant:\n%s", list)
	}
	id := strings.Fields(strings.Split(list, "\n")[1])[0]
	if _, stderr, code := run("", "keys", "revoke", "--data", data, id); code != 0 {
		t.Fatalf("keys revoke: %s", stderr)
	}
	if _, stderr, code := run(secret, "mcp", "--data", data); code != 1 || !strings.Contains(stderr, "revoked") {
		t.Fatalf("engram mcp with a revoked key: exit %d: %s", code, stderr)
	}
}

// bearerTransport adds an API key to every request.
type bearerTransport string

func (k bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(k))
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPOverServe: engram serve mounts the same tools at /mcp; the
// scenario runs against the real server with the generated key and a key
// of another tenant.
func TestMCPOverServe(t *testing.T) {
	m := boot(t, t.TempDir(), nil)
	generated, err := os.ReadFile(m.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.DB.EnsureTenant(context.Background(), "acme"); err != nil {
		t.Fatal(err)
	}
	_, acme, err := m.DB.CreateAPIKey(context.Background(), "acme", "test")
	if err != nil {
		t.Fatal(err)
	}
	connect := func(key string) *mcptest.Client {
		tr := &sdk.StreamableClientTransport{Endpoint: m.URL() + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport(key)}}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "engram-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatalf("connect to /mcp: %v", err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return mcptest.NewClient(t, cs)
	}
	mcptest.Scenario(t, connect(strings.TrimSpace(string(generated))), connect(acme))
}

// TestDocsListTheTools: the MCP tool table of docs/mcp.md names exactly
// the tools the server lists.
func TestDocsListTheTools(t *testing.T) {
	doc, err := os.ReadFile("../../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	var names []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(section, -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	if !slices.Equal(names, mcptest.Tools) {
		t.Fatalf("docs/mcp.md's MCP tools %v, the server's %v", names, mcptest.Tools)
	}
}
