package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram/mcp"
	"github.com/engram-memory/engram/store/storetest"
)

const testAdminKey = "admin-0123456789abcdef"

// call sends one request to m and returns its status, headers and body.
func call(t *testing.T, m *Main, method, path, key, contentType, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(method, m.URL()+path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// bootEngine boots Main on engine with the admin API on.
func bootEngine(t *testing.T, engine string) *Main {
	environ := []string{"ENGRAM_STORE_DRIVER=" + engine, "ENGRAM_ADMIN_KEY=" + testAdminKey}
	if engine == "postgres" {
		environ = append(environ, "ENGRAM_STORE_DSN="+storetest.Options(t, engine).DSN)
	}
	return boot(t, t.TempDir(), environ)
}

// adminKey creates a key for tenant through the admin API.
func adminKey(t *testing.T, m *Main, tenant, body string) string {
	t.Helper()
	status, _, b := call(t, m, "POST", "/v1/admin/tenants/"+tenant+"/keys", testAdminKey, "application/json", body)
	if status != http.StatusCreated {
		t.Fatalf("create key: %d %s", status, b)
	}
	var out struct {
		Secret string `json:"secret"`
	}
	_ = json.Unmarshal([]byte(b), &out)
	return out.Secret
}

// acmeKeys boots Main on engine with a tenant acme and three of its keys:
// of clearance secret, of the default clearance (internal), and one that
// wants the masker.
func acmeKeys(t *testing.T, engine string) (m *Main, secret, internal, masked string) {
	t.Helper()
	m = bootEngine(t, engine)
	if s, _, b := call(t, m, "POST", "/v1/admin/tenants", testAdminKey, "application/json", `{"name":"acme"}`); s != http.StatusCreated {
		t.Fatalf("create tenant: %d %s", s, b)
	}
	return m, adminKey(t, m, "acme", `{"name":"ops","clearance":"secret"}`), adminKey(t, m, "acme", `{"name":"bot"}`),
		adminKey(t, m, "acme", `{"name":"support","mask_pii":true}`)
}

// TestClearanceEveryDoor: a key of clearance internal never reads a
// confidential memory in clear — not through recall, prompt, context,
// boot, list, get, a key read or a history over REST, nor through MCP's
// recall, boot and prompt — and every answer counts what it withheld; a
// secret key reads it; in mask mode a get shows the memory masked; a key
// that wants the masker reads e-mail addresses and phone numbers redacted.
func TestClearanceEveryDoor(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		m, secret, internal, masked := acmeKeys(t, engine)

		write := func(body string) string { return writeAs(t, m, secret, body) }
		write(`{"content":"The office wifi network is called Lighthouse","category":"work","security_level":"public"}`)
		hidden := write(`{"content":"The office wifi password is tangerine-42","category":"work","security_level":"confidential"}`)
		write(`{"content":"Maya's salary is 90000 a year","category":"life","priority":"P0","security_level":"secret"}`)
		write(`{"content":"Maya's email is maya.ruiz@example.com and her phone +1 415 555 0100","category":"life"}`)
		// A key write takes no level; the memory at the key gets one after.
		s, _, b := call(t, m, "PUT", "/v1/keys/office/wifi/secret", secret, "application/json",
			`{"content":"tangerine-42 opens the guest wifi","source":"it desk"}`)
		var atKey struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(b), &atKey); err != nil || s >= 300 || atKey.ID == "" {
			t.Fatalf("key write: %d %s", s, b)
		}
		if s, _, b := call(t, m, "PATCH", "/v1/memories/"+atKey.ID, secret, "application/json", `{"security_level":"confidential"}`); s != http.StatusOK {
			t.Fatalf("level of the key's memory: %d %s", s, b)
		}

		leaks := func(body string) bool { return strings.Contains(body, "tangerine") || strings.Contains(body, "90000") }
		doors := []struct{ method, path, body string }{
			{"POST", "/v1/recall", `{"query":"what is the office wifi password","token_budget":500,"fill":true,"identity":true}`},
			{"POST", "/v1/prompt", `{"query":"what is the office wifi password","token_budget":800}`},
			{"GET", "/v1/context?token_limit=800", ""},
			{"GET", "/v1/boot", ""},
			{"GET", "/v1/memories?limit=50", ""},
			{"GET", "/v1/memories/" + hidden, ""},
			{"GET", "/v1/memories/" + hidden + "/history", ""},
			{"GET", "/v1/keys/office/wifi/secret", ""},
		}
		for _, d := range doors {
			s, h, b := call(t, m, d.method, d.path, internal, "application/json", d.body)
			if leaks(b) {
				t.Errorf("%s %s through an internal key leaks: %s", d.method, d.path, b)
			}
			if h.Get("X-Engram-Withheld") == "" {
				t.Errorf("%s %s: no X-Engram-Withheld (status %d)", d.method, d.path, s)
			}
			if (strings.HasPrefix(d.path, "/v1/memories/") || strings.HasPrefix(d.path, "/v1/keys/")) && s != http.StatusNotFound {
				t.Errorf("%s %s: %d, want 404 for a memory above the clearance", d.method, d.path, s)
			}
		}
		// Writes cannot read, nor lower a level.
		for _, w := range []struct{ method, path, body string }{
			{"PATCH", "/v1/memories/" + hidden, `{"security_level":"public"}`},
			{"DELETE", "/v1/memories/" + hidden, ""},
			{"POST", "/v1/memories/" + hidden + "/rollback", `{"version":1}`},
			{"PUT", "/v1/keys/office/wifi/secret", `{"content":"overwritten","source":"bot"}`},
		} {
			if s, _, b := call(t, m, w.method, w.path, internal, "application/json", w.body); s != http.StatusNotFound || leaks(b) {
				t.Errorf("%s %s through an internal key: %d %s, want 404", w.method, w.path, s, b)
			}
		}
		if _, _, b := call(t, m, "GET", "/v1/keys/office/wifi/secret", secret, "", ""); !strings.Contains(b, "tangerine") {
			t.Errorf("a refused write changed the memory: %s", b)
		}
		if _, h, b := call(t, m, "POST", "/v1/recall", secret, "application/json", doors[0].body); !strings.Contains(b, "tangerine") || h.Get("X-Engram-Withheld") != "" {
			t.Errorf("a secret key must read everything: %s", b)
		}

		// Mask mode: the memory is there, its text is not.
		if s, _, b := call(t, m, "PATCH", "/v1/admin/tenants/acme", testAdminKey, "application/json", `{"withhold":"mask"}`); s != http.StatusOK {
			t.Fatalf("withhold=mask: %d %s", s, b)
		}
		if s, h, b := call(t, m, "GET", "/v1/memories/"+hidden, internal, "", ""); s != http.StatusOK || leaks(b) ||
			!strings.Contains(b, "[withheld: confidential]") || h.Get("X-Engram-Withheld") != "1" {
			t.Errorf("masked get: %d %v %s", s, h, b)
		}
		if s, _, b := call(t, m, "PATCH", "/v1/memories/"+hidden, internal, "application/json", `{"security_level":"public"}`); s != http.StatusForbidden || leaks(b) {
			t.Errorf("masked patch: %d %s, want 403", s, b)
		}

		// The masker.
		_, _, b = call(t, m, "POST", "/v1/recall", masked, "application/json", `{"query":"Maya email phone","token_budget":500,"fill":true}`)
		if strings.Contains(b, "maya.ruiz@example.com") || strings.Contains(b, "555 0100") || !strings.Contains(b, "[email]") {
			t.Errorf("masker: %s", b)
		}

		// MCP over HTTP, with the internal key.
		tr := &sdk.StreamableClientTransport{Endpoint: m.URL() + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport(internal)}}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "engram-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		for name, args := range map[string]map[string]any{
			"recall": {"query": "what is the office wifi password", "fill": true, "identity": true},
			"boot":   {},
			"prompt": {"query": "what is the office wifi password"},
		} {
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
			if err != nil || res.IsError {
				t.Fatalf("mcp %s: %v %+v", name, err, res)
			}
			body, _ := json.Marshal(res.StructuredContent)
			if leaks(string(body)) {
				t.Errorf("mcp %s leaks: %s", name, body)
			}
			if n, _ := res.Meta[mcp.WithheldMeta].(float64); n < 1 {
				t.Errorf("mcp %s: _meta %v, want %s ≥ 1", name, res.Meta, mcp.WithheldMeta)
			}
		}
	})
}

// TestAdminKeyFromFile: ENGRAM_ADMIN_KEY_FILE turns the admin API on;
// without an admin key it is 404.
func TestAdminKeyFromFile(t *testing.T) {
	off := boot(t, t.TempDir(), nil)
	if s, _, _ := call(t, off, "GET", "/v1/admin/tenants", testAdminKey, "", ""); s != http.StatusNotFound {
		t.Fatalf("admin API without an admin key: %d, want 404", s)
	}
	file := t.TempDir() + "/admin"
	if err := os.WriteFile(file, []byte(testAdminKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	on := boot(t, t.TempDir(), []string{"ENGRAM_ADMIN_KEY_FILE=" + file})
	if s, _, b := call(t, on, "GET", "/v1/admin/tenants", testAdminKey, "", ""); s != http.StatusOK || !strings.Contains(b, `"default"`) {
		t.Fatalf("admin API with the key from a file: %d %s", s, b)
	}
}

// TestClearanceReflections: an L3 reflection is as secret as the most
// secret memory it was written from. A key of clearance internal does not
// read one written from confidential memories — not listed, not by id
// (404), not injected into a recall or a prompt, not through MCP's
// reflect — and each answer counts it as withheld; in mask mode a get
// shows it masked; a secret key reads it.
func TestClearanceReflections(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		m, secret, internal, masker := acmeKeys(t, engine)
		for _, c := range []string{
			"The Falcon cutover uses the vault passphrase tangerine-42",
			"Falcon cutover rollback needs the vault passphrase tangerine-42 too",
			"The Falcon cutover is planned for Friday night with the vault passphrase",
		} {
			if s, _, b := call(t, m, "POST", "/v1/memories", secret, "application/json",
				`{"content":"`+c+`","category":"work","tags":["falcon"],"security_level":"confidential"}`); s != http.StatusCreated {
				t.Fatalf("create: %d %s", s, b)
			}
		}
		// Any key may ask for the reflections to be written; its answer
		// names no group it may not read.
		if s, _, b := call(t, m, "POST", "/v1/reflect", internal, "application/json", `{}`); s != http.StatusOK || !strings.Contains(b, `"groups":1,"written":[]`) {
			t.Fatalf("reflect: %d %s", s, b)
		}
		_, _, list := call(t, m, "GET", "/v1/reflections", secret, "", "")
		var page struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(list), &page); err != nil || len(page.Items) == 0 || !strings.Contains(list, "tangerine") {
			t.Fatalf("a secret key lists the reflection: %v %s", err, list)
		}
		id := page.Items[0].ID
		const recall = `{"query":"What have I learned about the Falcon cutover and rollback?","token_budget":800}`
		if _, _, b := call(t, m, "POST", "/v1/recall", secret, "application/json", recall); !strings.Contains(b, `"id":"`+id+`"`) {
			t.Fatalf("a secret key's recall injects the reflection: %s", b)
		}

		leaks := func(body string) bool { return strings.Contains(body, "tangerine") || strings.Contains(body, id) }
		for _, d := range []struct{ method, path, body string }{
			{"GET", "/v1/reflections", ""},
			{"GET", "/v1/reflections/" + id, ""},
			{"POST", "/v1/recall", recall},
			{"POST", "/v1/prompt", recall},
		} {
			s, h, b := call(t, m, d.method, d.path, internal, "application/json", d.body)
			if leaks(b) {
				t.Errorf("%s %s through an internal key leaks: %s", d.method, d.path, b)
			}
			if h.Get("X-Engram-Withheld") == "" {
				t.Errorf("%s %s: no X-Engram-Withheld (status %d)", d.method, d.path, s)
			}
			if strings.HasPrefix(d.path, "/v1/reflections/") && s != http.StatusNotFound {
				t.Errorf("%s %s: %d, want 404 for a reflection above the clearance", d.method, d.path, s)
			}
		}

		tr := &sdk.StreamableClientTransport{Endpoint: m.URL() + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport(internal)}}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "engram-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "reflect", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("mcp reflect: %v %+v", err, res)
		}
		if n, _ := res.Meta[mcp.WithheldMeta].(float64); n < 1 {
			t.Errorf("mcp reflect: _meta %v, want %s ≥ 1", res.Meta, mcp.WithheldMeta)
		}
		if body, _ := json.Marshal(res.StructuredContent); strings.Contains(string(body), "tangerine") || !strings.Contains(string(body), `"reflections":[]`) {
			t.Errorf("mcp reflect leaks: %s", body)
		}

		// The masker redacts what a reflection quotes.
		for _, c := range []string{"Maya's email is maya.ruiz@example.com", "Maya answers mail at maya.ruiz@example.com", "Maya reads email daily"} {
			if s, _, b := call(t, m, "POST", "/v1/memories", secret, "application/json", `{"content":"`+c+`","category":"life","tags":["maya"]}`); s != http.StatusCreated {
				t.Fatalf("create: %d %s", s, b)
			}
		}
		if s, _, b := call(t, m, "POST", "/v1/reflect", internal, "application/json", `{}`); s != http.StatusOK {
			t.Fatalf("reflect: %d %s", s, b)
		}
		if _, _, b := call(t, m, "GET", "/v1/reflections", masker, "", ""); strings.Contains(b, "maya.ruiz@example.com") || !strings.Contains(b, "[email]") {
			t.Errorf("the masker's list: %s", b)
		}

		if s, _, b := call(t, m, "PATCH", "/v1/admin/tenants/acme", testAdminKey, "application/json", `{"withhold":"mask"}`); s != http.StatusOK {
			t.Fatalf("withhold=mask: %d %s", s, b)
		}
		if s, h, b := call(t, m, "GET", "/v1/reflections/"+id, internal, "", ""); s != http.StatusOK || strings.Contains(b, "tangerine") ||
			!strings.Contains(b, "[withheld: confidential]") || h.Get("X-Engram-Withheld") != "1" {
			t.Errorf("masked get: %d %v %s", s, h, b)
		}
	})
}
