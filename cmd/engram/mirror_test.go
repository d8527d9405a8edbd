package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram/mcp/mcptest"
)

// The file mirror follows what the REST API and MCP write, while the server runs;
// engram mirror rebuild, run beside it, recreates the same files; grep
// finds every live key.
func TestMirrorFollowsServe(t *testing.T) {
	dir := t.TempDir()
	m := boot(t, dir, []string{"ENGRAM_MIRROR_POLL=20ms", "ENGRAM_MIRROR_MIN_FREE_BYTES=0"})
	data := m.Config.DataDir
	post := poster(t, m)
	key, err := os.ReadFile(m.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	put := func(path, body string) {
		t.Helper()
		req, _ := http.NewRequest("PUT", m.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(key)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
			t.Fatalf("PUT %s: %d %s", path, resp.StatusCode, b)
		}
	}
	put("/v1/keys/user/calendar/dentist", `{"content":{"text":"下周三上午十点牙科复诊"},"source":"chat"}`)
	put("/v1/keys/user/calendar/gym", `{"content":"gym on Friday","source":"chat"}`)
	post("/v1/memories", `{"content":"User drinks coffee black","category":"preference"}`)
	put("/v1/keys/user/calendar/gym", `{"content":null,"source":"chat"}`)
	tr := &sdk.StreamableClientTransport{Endpoint: m.URL() + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport(strings.TrimSpace(string(key)))}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "engram-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	mcptest.NewClient(t, cs).Call(t, "set_memory", map[string]any{"key": "/agent/notes/mcp", "content": map[string]any{"text": "written over MCP"}, "source": "mcp"})

	root := filepath.Join(data, "mirror", "default")
	waitFor(t, func() bool {
		_, err1 := os.Stat(filepath.Join(root, "index", "user", "calendar", "dentist.json"))
		_, err2 := os.Stat(filepath.Join(root, "index", "user", "calendar", "gym.json"))
		_, err3 := os.Stat(filepath.Join(root, "index", "agent", "notes", "mcp.json"))
		b, _ := os.ReadFile(filepath.Join(root, "log.jsonl"))
		return err1 == nil && os.IsNotExist(err2) && err3 == nil && bytes.Count(b, []byte("\n")) == 5
	})
	out, err := exec.Command("grep", "-rl", "牙科", root).CombinedOutput()
	if err != nil || !strings.Contains(string(out), filepath.Join("index", "user", "calendar", "dentist.json")) {
		t.Fatalf("grep -r 牙科: %v %s", err, out)
	}
	before := tree(t, root)

	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"mirror", "rebuild", "--data", data}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("mirror rebuild: %d %s", code, stderr.String())
	}
	var res struct {
		Tenant    string
		Envelopes int
		Live      int
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.Tenant != "default" || res.Envelopes != 5 || res.Live != 3 {
		t.Fatalf("rebuild said %q (%v)", stdout.String(), err)
	}
	after := tree(t, root)
	if len(after) != len(before) {
		t.Fatalf("rebuild: %d files, following wrote %d", len(after), len(before))
	}
	for p, s := range before {
		if after[p] != s {
			t.Errorf("rebuild changed %s", p)
		}
	}

	stdout.Reset()
	stderr.Reset()
	if code := Run(context.Background(), []string{"mirror", "rebuild", "--tenant", "nope", "--data", data}, nil, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), `tenant "nope" not found`) {
		t.Fatalf("unknown tenant: %d %q", code, stderr.String())
	}
	stderr.Reset()
	if code := Run(context.Background(), []string{"mirror", "--data", data}, nil, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "usage: engram mirror") {
		t.Fatalf("no verb: %d %q", code, stderr.String())
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatal("the file mirror did not catch up in 15 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tree reads every file under dir.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// With the mirror off, serve writes no files; engram mirror sync, run
// afterwards, applies every write.
func TestMirrorSyncCLI(t *testing.T) {
	dir := t.TempDir()
	m := boot(t, dir, []string{"ENGRAM_MIRROR_ENABLED=false"})
	data := m.Config.DataDir
	poster(t, m)("/v1/memories", `{"content":"User drinks coffee black","category":"preference"}`)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(data, "mirror", "default")
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("mirror.enabled false must write no mirror: %v", err)
	}
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"mirror", "sync", "--data", data}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("mirror sync: %d %s", code, stderr.String())
	}
	files := tree(t, filepath.Join(root, "memories", "preference"))
	if len(files) != 1 {
		t.Fatalf("after sync: %v", files)
	}
	for _, s := range files {
		if !strings.Contains(s, `"content":"User drinks coffee black"`) {
			t.Fatalf("envelope: %s", s)
		}
	}
}
