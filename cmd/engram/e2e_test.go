package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-memory/engram/configs"
)

// boot starts the real Main on a free port with a fresh data directory.
func boot(t *testing.T, dir string, environ []string) *Main {
	t.Helper()
	// Recalls are exactly reproducible only without exploration.
	cfg, err := configs.Load("", append([]string{"ENGRAM_LEARNING_EXPLORE=0"}, environ...))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.Server.Addr = "127.0.0.1:0"
	m := &Main{Config: cfg}
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// poster returns a function that POSTs JSON to m with the default
// tenant's generated key and returns the body of a 2xx answer.
func poster(t *testing.T, m *Main) func(path, body string) string {
	key, err := os.ReadFile(m.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return func(path, body string) string {
		t.Helper()
		req, _ := http.NewRequest("POST", m.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(key)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
}

// TestREADMEQuickstart runs the README's curl quickstart, as written,
// against a freshly booted server.
func TestREADMEQuickstart(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is needed to walk the README quickstart")
	}
	dir := t.TempDir()
	m := boot(t, dir, nil)
	if m.KeyFile != filepath.Join(dir, "data", "api_key") {
		t.Fatalf("generated key file %q", m.KeyFile)
	}
	if fi, err := os.Stat(m.KeyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", fi, err)
	}
	out := runQuickstart(t, m, dir, "bash", readmeBlock(t, "quickstart", "sh"))
	// The responses, in the README's order.
	inOrder(t, out,
		`"content":"User drinks coffee black, no sugar"`, `"deduplicated":false`, // create
		`"content":"User drinks coffee black, no sugar"`, // get
		`{"items":[{"id":"mem_`,                          // list
		`"key":"/user/preference/style"`, `"version":1`,  // set key
		`"content":"answers in short bullet points"`, // read key
		`"valid":false`, // tombstone
		`{"error":{"code":"not_found","message":"key /user/preference/style is tombstoned"}}`,
		`"recall_id":"rec_`, `"text":"User drinks coffee black, no sugar"`, `"context":"[Agent Memory]\n- User drinks coffee black, no sugar`,
	)
}

// readmeBlock returns the code block of the README between
// <!-- NAME:begin --> and <!-- NAME:end -->, fenced as lang.
func readmeBlock(t *testing.T, name, lang string) string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- " + regexp.QuoteMeta(name) + ":begin -->\n```" + lang + "\n(.*?)```\n<!-- " + regexp.QuoteMeta(name) + ":end -->")
	block := re.FindSubmatch(readme)
	if block == nil {
		t.Fatalf("README has no %s block fenced as %s", name, lang)
	}
	return string(block[1])
}

// runQuickstart runs script with interpreter (bash or python3) in dir,
// where data/ is m's data directory, with the README's URL replaced by
// m's and ENGRAM_URL and ENGRAM_API_KEY set as the README says; it fails
// the test unless the script exits 0, and returns what it printed.
func runQuickstart(t *testing.T, m *Main, dir, interpreter, script string) string {
	t.Helper()
	script = strings.ReplaceAll(script, "http://127.0.0.1:8080", m.URL())
	key, err := os.ReadFile(m.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	if interpreter == "bash" {
		cmd = exec.Command("bash", "-euo", "pipefail", "-c", script)
	} else {
		cmd = exec.Command(interpreter, "-c", script)
	}
	cmd.Dir = dir
	pythonPath, err := filepath.Abs("../../clients/python")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "ENGRAM_URL="+m.URL(), "ENGRAM_API_KEY="+strings.TrimSpace(string(key)), "PYTHONPATH="+pythonPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("quickstart failed: %v\n%s\n%s", err, out, stderr.String())
	}
	return string(out)
}

// inOrder fails t unless out holds every want, in order.
func inOrder(t *testing.T, out string, wants ...string) {
	t.Helper()
	rest := out
	for _, want := range wants {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("quickstart output lacks %s (in order); output:\n%s", want, out)
		}
		rest = rest[i+len(want):]
	}
}

// TestREADMEQuickstartChinese runs the 中文 quickstart and its file
// mirror block, as written: a recall, two answers to one turn with a
// thumb each, the pair they make, a Chinese key and its mirror file.
func TestREADMEQuickstartChinese(t *testing.T) {
	for _, tool := range []string{"curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to walk the 中文 quickstart", tool)
		}
	}
	dir := t.TempDir()
	m := boot(t, dir, nil)
	out := runQuickstart(t, m, dir, "bash", readmeBlock(t, "quickstart-zh", "sh")+readmeBlock(t, "quickstart-zh-mirror", "sh"))
	inOrder(t, out,
		`"content":"我喝咖啡不加糖"`, `{"items":[{"id":"mem_`, // create, search
		`"signal":1,"credited":[{"id":"mem_`, `"signal":-1`, // thumbs
		`{"prompt":"明天早上喝什么咖啡？","chosen":"一杯黑咖啡，不加糖。","rejected":"焦糖拿铁，多加糖。"}`,
		`"key":"/user/日程/牙科"`, // set key
		"牙科.json\n",           // ls
		`data/mirror/default/index/user/日程/牙科.json:{"key":"/user/日程/牙科"`, // grep
		`{"key":"/user/日程/牙科","content":{"text":"下周三上午十点牙科复诊"}}`,         // jq
		`"valid":false`, // tombstone
	)
}

// TestREADMEQuickstartPython runs the README's Python quickstart with the
// client under clients/python: the pair it prints comes from the two
// answers it thumbs.
func TestREADMEQuickstartPython(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is needed to run the Python quickstart")
	}
	dir := t.TempDir()
	m := boot(t, dir, nil)
	out := runQuickstart(t, m, dir, "python3", readmeBlock(t, "quickstart-python", "python"))
	if out != "Black, no sugar. > With milk and two sugars.\n" {
		t.Fatalf("python quickstart printed %q", out)
	}
}

// TestServeLifecycle runs the binary's serve verb: it prints the URL and
// the key file, answers, stops on cancellation (SIGTERM), and a restart
// finds every acknowledged write.
func TestServeLifecycle(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	key := "ci-test-key-0123456789"
	environ := []string{"ENGRAM_API_KEY=" + key, "ENGRAM_SERVER_LOG_LEVEL=warn", "ENGRAM_LEARNING_EXPLORE=0"}
	url := serveOnce(t, data, environ, func(url string) {
		req, _ := http.NewRequest("PUT", url+"/v1/keys/user/name", strings.NewReader(`{"content":"Ada","source":"chat"}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("put: %v %v", resp, err)
		}
		resp.Body.Close()
	})
	if _, err := os.Stat(filepath.Join(data, "api_key")); !os.IsNotExist(err) {
		t.Fatal("with ENGRAM_API_KEY set, no key file is generated")
	}
	serveOnce(t, data, environ, func(u string) {
		if u == url {
			t.Log("same port reused")
		}
		req, _ := http.NewRequest("GET", u+"/v1/keys/user/name", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("after restart: %v %v", resp, err)
		}
		resp.Body.Close()
	})
}

func serveOnce(t *testing.T, data string, environ []string, during func(url string)) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, w, _ := os.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", data}, environ, w, os.Stderr)
		w.Close()
	}()
	line := make([]byte, 256)
	n, _ := r.Read(line)
	url := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(string(line[:n]), "\n", 2)[0], "engram listening on "))
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("serve printed %q", line[:n])
	}
	during(url)
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited %d", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop on cancellation")
	}
	return url
}

func TestRunUsageAndKeys(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Run(context.Background(), nil, nil, &out, &errb); code != 2 {
		t.Fatalf("no args: exit %d", code)
	}
	if code := Run(context.Background(), []string{"bogus"}, nil, &out, &errb); code != 2 {
		t.Fatalf("unknown verb: exit %d", code)
	}
	data := t.TempDir()
	out.Reset()
	if code := Run(context.Background(), []string{"keys", "create", "--data", data, "--tenant", "acme"}, nil, &out, &errb); code != 0 {
		t.Fatalf("keys create: %d %s", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "egk_") {
		t.Fatalf("keys create printed %q", out.String())
	}
	out.Reset()
	if code := Run(context.Background(), []string{"keys", "list", "--data", data}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), "acme") {
		t.Fatalf("keys list: %d %q", code, out.String())
	}
	id := regexp.MustCompile(`key_[a-z0-9]+`).FindString(out.String())
	out.Reset()
	if code := Run(context.Background(), []string{"keys", "revoke", "--data", data, id}, nil, &out, &errb); code != 0 {
		t.Fatalf("keys revoke: %d %s", code, errb.String())
	}
	if code := Run(context.Background(), []string{"keys", "revoke", "--data", data, id}, nil, &out, &errb); code != 1 {
		t.Fatalf("revoking twice must fail: %d", code)
	}
	if code := Run(context.Background(), []string{"serve", "--data", data}, []string{"ENGRAM_STORE_DRIVER=mysql"}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "store.driver") {
		t.Fatalf("bad config must fail before anything opens: %d %q", code, errb.String())
	}
}

// TestExportPairsCLI: engram export pairs writes, offline, the lines the
// API streams.
func TestExportPairsCLI(t *testing.T) {
	dir := t.TempDir()
	m := boot(t, dir, nil)
	post := poster(t, m)
	id := regexp.MustCompile(`"interaction_id":"(int_[a-z0-9]+)"`)
	a := id.FindStringSubmatch(post("/v1/interactions", `{"prompt":"Tea or coffee?","response":"Tea.","turn_id":"t1"}`))[1]
	b := id.FindStringSubmatch(post("/v1/interactions", `{"prompt":"Tea or coffee?","response":"Coffee, black.","turn_id":"t1"}`))[1]
	post("/v1/feedback", `{"interaction_id":"`+a+`","thumb":"down"}`)
	post("/v1/feedback", `{"interaction_id":"`+b+`","thumb":"up"}`)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "pairs.jsonl")
	var errb bytes.Buffer
	if code := Run(context.Background(), []string{"export", "pairs", "--data", filepath.Join(dir, "data"), "--format", "trl", "--out", out},
		nil, io.Discard, &errb); code != 0 {
		t.Fatalf("export: %d %s", code, errb.String())
	}
	got, _ := os.ReadFile(out)
	if want := `{"prompt":"Tea or coffee?","chosen":"Coffee, black.","rejected":"Tea."}` + "\n"; string(got) != want {
		t.Fatalf("exported %q, want %q", got, want)
	}
	if code := Run(context.Background(), []string{"export", "pairs", "--data", filepath.Join(dir, "data"), "--format", "kto"},
		nil, io.Discard, &errb); code != 1 {
		t.Fatalf("unknown format: exit %d", code)
	}
}

// fakeEmbeddings speaks the OpenAI embeddings wire format (POST
// /v1/embeddings) over a concept space of two: a text concept says is
// about the concept gets (1, 0), any other (0, 1). concept sees every
// input, one at a time, in order.
func fakeEmbeddings(t *testing.T, concept func(text string) bool) *httptest.Server {
	var mu sync.Mutex
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		type datum struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []datum
		mu.Lock()
		for i, text := range req.Input {
			vec := []float32{0, 1}
			if concept(text) {
				vec = []float32{1, 0}
			}
			data = append(data, datum{Index: i, Embedding: vec})
		}
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	}))
	t.Cleanup(fake.Close)
	return fake
}

// TestEmbeddingsFollowWrites: with an embeddings endpoint configured, the
// server embeds what is written in the background, following the change
// feed, so a query in another language finds it through its vector.
func TestEmbeddingsFollowWrites(t *testing.T) {
	var inputs atomic.Int64
	fake := fakeEmbeddings(t, func(text string) bool {
		inputs.Add(1)
		return strings.Contains(text, "espresso") || strings.Contains(text, "咖啡")
	})
	m := boot(t, t.TempDir(), []string{"ENGRAM_EMBEDDINGS_BASE_URL=" + fake.URL + "/v1", "ENGRAM_EMBEDDINGS_POLL=20ms"})
	post := poster(t, m)
	post("/v1/memories", `{"content":"User drinks a double espresso every morning","category":"preference"}`)
	post("/v1/memories", `{"content":"The dentist moved to Tuesday","category":"life"}`)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(post("/v1/recall", `{"query":"我想喝咖啡","token_budget":200}`), "double espresso") {
		if time.Now().After(deadline) {
			t.Fatalf("the memory was not embedded within 10 s (%d texts sent)", inputs.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAPIKeyRotation: restarting with a new ENGRAM_API_KEY revokes the
// configured key it replaces (401 from then on) and says so in the log,
// naming the key by id and never by secret; keys created by hand stay.
func TestAPIKeyRotation(t *testing.T) {
	dir := t.TempDir()
	old, next := "rotation-old-key-0123456789", "rotation-new-key-9876543210"
	m := boot(t, dir, []string{"ENGRAM_API_KEY=" + old})
	_, manual, err := m.DB.CreateAPIKey(context.Background(), m.Config.Auth.DefaultTenant, "web")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	cfg, err := configs.Load("", []string{"ENGRAM_API_KEY=" + next})
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.Server.Addr = "127.0.0.1:0"
	var logs bytes.Buffer
	m2 := &Main{Config: cfg, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	if err := m2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m2.Close() })
	status := func(key string) int {
		req, _ := http.NewRequest("GET", m2.URL()+"/v1/memories", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status(old); got != http.StatusUnauthorized {
		t.Errorf("replaced key: %d, want 401", got)
	}
	if got := status(next); got != http.StatusOK {
		t.Errorf("new key: %d, want 200", got)
	}
	if got := status(manual); got != http.StatusOK {
		t.Errorf("a key made with keys create: %d, want 200", got)
	}
	if !strings.Contains(logs.String(), "API key rotated") || strings.Contains(logs.String(), old) || strings.Contains(logs.String(), next) {
		t.Errorf("log:\n%s", logs.String())
	}
}
