package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/mattn/go-sqlite3"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram/mcp/mcptest"
	"github.com/engram-memory/engram/store/storetest"
)

// usersServer boots engram on engine with the mirror following fast, and
// returns it with a function that sends one authenticated request.
func usersServer(t *testing.T, engine string) (*Main, func(method, path, body string) (int, string)) {
	t.Helper()
	environ := []string{"ENGRAM_MIRROR_POLL=20ms"}
	if engine == "postgres" {
		environ = append(environ, "ENGRAM_STORE_DRIVER=postgres", "ENGRAM_STORE_DSN="+storetest.Options(t, engine).DSN)
	} else {
		environ = append(environ, "ENGRAM_MIRROR_ENABLED=true")
	}
	m := boot(t, t.TempDir(), environ)
	key, err := os.ReadFile(m.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, body string) (int, string) {
		t.Helper()
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, m.URL()+path, r)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(key)))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	return m, do
}

// words each user's data is written with: no other user's response may
// hold them.
var userWords = map[string]string{"ann": "aardvark", "bob": "bumblebee"}

// writeUser writes data of user u through every door that takes user_id.
func writeUser(t *testing.T, do func(method, path, body string) (int, string), u string) {
	t.Helper()
	w := userWords[u]
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/memories", fmt.Sprintf(`{"content":"The %s zoo opens at nine","category":"kb","user_id":%q}`, w, u)},
		{"POST", "/v1/memories", fmt.Sprintf(`{"content":"I am the %s keeper","category":"life","priority":"P0","user_id":%q}`, w, u)},
		{"POST", "/v1/memories/batch", fmt.Sprintf(`{"memories":[{"content":"The %s zoo feeds at noon","category":"kb","user_id":%q},{"content":"The %s zoo closes at dusk","category":"kb","user_id":%q}]}`, w, u, w, u)},
		{"PUT", "/v1/keys/prefs/zoo", fmt.Sprintf(`{"content":{"text":"favourite zoo animal %s"},"source":"test","user_id":%q}`, w, u)},
		{"PUT", "/v1/aliases/prefs/zoo-" + w, fmt.Sprintf(`{"key":"/prefs/zoo","user_id":%q}`, u)},
		{"PUT", "/v1/agents/guide/persona?user_id=" + u, fmt.Sprintf(`{"markdown":"You guide the %s zoo."}`, w)},
		{"POST", "/v1/sessions/s-" + u + "/events", fmt.Sprintf(`{"type":"message","role":"user","content":"tell me about the %s zoo","user_id":%q}`, w, u)},
	} {
		if st, b := do(c.method, c.path, c.body); st >= 300 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, st, b)
		}
	}
}

// lists are the reads of TestUserIsolation that list the tenant's items:
// with user_id exactly that user's, without every user's.
var lists = map[string]bool{"list": true, "pairs": true, "unpaired": true, "reflections": true}

// feedbackUser gives user u a recall, an answer and a thumb down with a
// correction: an interaction, feedback and a pair of u's.
func feedbackUser(t *testing.T, do func(method, path, body string) (int, string), u string) {
	t.Helper()
	w := userWords[u]
	_, rb := do("POST", "/v1/recall", fmt.Sprintf(`{"query":"%s zoo","token_budget":300,"user_id":%q}`, w, u))
	var rec struct {
		RecallID string `json:"recall_id"`
	}
	_ = json.Unmarshal([]byte(rb), &rec)
	st, ib := do("POST", "/v1/interactions", fmt.Sprintf(`{"prompt":"when does the %s zoo open","response":"at ten","recall_id":%q,"user_id":%q}`, w, rec.RecallID, u))
	if st != 201 {
		t.Fatalf("interaction: %d %s", st, ib)
	}
	var in struct {
		ID string `json:"interaction_id"`
	}
	_ = json.Unmarshal([]byte(ib), &in)
	if st, b := do("POST", "/v1/feedback", fmt.Sprintf(`{"interaction_id":%q,"thumb":"down","correction":"The %s zoo opens at nine sharp","user_id":%q}`, in.ID, w, u)); st >= 300 {
		t.Fatalf("feedback: %d %s", st, b)
	}
}

// TestUserIsolation: two end users of one tenant and the shared data.
// Every endpoint that takes user_id shows a user their own and the
// shared memories, never the other user's, and without user_id the shared
// ones only; REST and MCP alike, on both engines.
func TestUserIsolation(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		m, do := usersServer(t, engine)
		if st, b := do("POST", "/v1/memories", `{"content":"The shared zoo map is at the gate","category":"kb"}`); st != 201 {
			t.Fatalf("shared: %d %s", st, b)
		}
		if st, b := do("PUT", "/v1/agents/guide/persona", `{"markdown":"You guide the shared zoo."}`); st != 200 {
			t.Fatalf("shared persona: %d %s", st, b)
		}
		writeUser(t, do, "ann")
		writeUser(t, do, "bob")
		for u := range userWords {
			feedbackUser(t, do, u)
		}
		if st, b := do("POST", "/v1/reflect", ``); st != 200 {
			t.Fatalf("reflect: %d %s", st, b)
		}

		reads := []struct {
			name, method, path, body string
			own                      bool // the response shows the reader's own data
		}{
			{"recall", "POST", "/v1/recall", `{"query":"zoo","token_budget":400,"fill":true%s}`, true},
			{"recall reflections", "POST", "/v1/recall", `{"query":"looking back, what lessons did the zoo opening hours teach us? retrospective","token_budget":600%s}`, false},
			{"recall identity", "POST", "/v1/recall", `{"query":"who am I","token_budget":400,"identity":true%s}`, true},
			{"prompt", "POST", "/v1/prompt", `{"query":"zoo","token_budget":600,"agent_id":"guide"%s}`, true},
			{"context", "GET", "/v1/context?token_limit=600%s", "", true},
			{"boot", "GET", "/v1/boot?agent_id=guide%s", "", true},
			{"list", "GET", "/v1/memories?limit=50%s", "", true},
			{"key", "GET", "/v1/keys/prefs/zoo?x=1%s", "", true},
			{"persona", "GET", "/v1/agents/guide/persona?x=1%s", "", true},
			{"pairs", "GET", "/v1/pairs?format=trl%s", "", true},
			{"unpaired", "GET", "/v1/pairs?format=trl-unpaired%s", "", true},
			{"reflections", "GET", "/v1/reflections?limit=50%s", "", true},
		}
		for _, rd := range reads {
			for _, reader := range []string{"ann", "bob", ""} {
				t.Run(rd.name+"/"+reader, func(t *testing.T) {
					path, body := rd.path, rd.body
					if body != "" {
						arg := ""
						if reader != "" {
							arg = fmt.Sprintf(`,"user_id":%q`, reader)
						}
						body = fmt.Sprintf(body, arg)
					} else {
						arg := ""
						if reader != "" {
							arg = "&user_id=" + reader
						}
						path = fmt.Sprintf(path, arg)
					}
					path = strings.Replace(path, "?x=1&", "?", 1)
					path = strings.TrimSuffix(path, "?x=1")
					st, got := do(rd.method, path, body)
					if rd.name == "key" && reader == "" {
						return // the shared key does not exist
					}
					if lists[rd.name] && reader == "" {
						// A list without user_id is the tenant's (an
						// operator's view): every user's items.
						for u, w := range userWords {
							if !strings.Contains(strings.ToLower(got), w) {
								t.Errorf("the tenant's %s miss %s's %q: %s", rd.name, u, w, got)
							}
						}
						return
					}
					if st != 200 {
						t.Fatalf("%d %s", st, got)
					}
					low := strings.ToLower(got)
					for u, w := range userWords {
						switch {
						case u == reader && rd.own && !strings.Contains(low, w):
							t.Errorf("%s does not see their own %q: %s", reader, w, got)
						case u != reader && strings.Contains(low, w):
							t.Errorf("reader %q sees %s's %q: %s", reader, u, w, got)
						}
					}
				})
			}
		}

		// Bad user ids are refused, and change nothing.
		for _, bad := range []struct{ method, path, body string }{
			{"POST", "/v1/memories", `{"content":"x","user_id":"a b"}`},
			{"POST", "/v1/recall", `{"query":"zoo","token_budget":100,"user_id":"../etc"}`},
			{"GET", "/v1/context?token_limit=100&user_id=%20", ""},
			{"PUT", "/v1/keys/prefs/zoo", `{"content":"x","source":"t","user_id":"` + strings.Repeat("u", 200) + `"}`},
			{"DELETE", "/v1/users/a%20b", ""},
			{"GET", "/v1/pairs?format=trl&user_id=a%20b", ""},
			{"GET", "/v1/reflections?user_id=..", ""},
		} {
			if st, b := do(bad.method, bad.path, bad.body); st != 400 {
				t.Errorf("%s %s: %d %s, want 400", bad.method, bad.path, st, b)
			}
		}
		// engram export pairs --user: one user's pairs, offline, from the
		// same store; a bad id is refused.
		environ := []string{"ENGRAM_STORE_DRIVER=" + m.Config.Store.Driver, "ENGRAM_STORE_DSN=" + m.Config.Store.DSN}
		for _, u := range []string{"ann", "bob", "a b"} {
			var out, errb bytes.Buffer
			code := Run(context.Background(), []string{"export", "pairs", "--data", m.Config.DataDir, "--format", "trl", "--user", u},
				environ, &out, &errb)
			low := strings.ToLower(out.String())
			switch {
			case u == "a b" && (code != 1 || !strings.Contains(errb.String(), "user_id")):
				t.Errorf("export pairs --user %q: exit %d %s", u, code, errb.String())
			case u != "a b" && (code != 0 || !strings.Contains(low, userWords[u]) || strings.Count(low, "\n") != 1 ||
				strings.Contains(low, userWords[map[string]string{"ann": "bob", "bob": "ann"}[u]])):
				t.Errorf("export pairs --user %s: exit %d %q %s", u, code, out.String(), errb.String())
			}
		}

		// The lists with user_id= (empty) hold the shared items only.
		for _, path := range []string{"/v1/memories?user_id=", "/v1/pairs?format=trl&user_id=", "/v1/reflections?user_id="} {
			st, got := do("GET", path, "")
			if low := strings.ToLower(got); st != 200 || strings.Contains(low, "aardvark") || strings.Contains(low, "bumblebee") {
				t.Errorf("%s: %d %s", path, st, got)
			}
		}

		// MCP: the same rule through the tools.
		key, _ := os.ReadFile(m.KeyFile)
		tr := &sdk.StreamableClientTransport{Endpoint: m.URL() + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport(strings.TrimSpace(string(key)))}}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "engram-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		c := mcptest.NewClient(t, cs)
		c.Call(t, "remember", map[string]any{"content": "The cobra zoo is private to ann", "category": "kb", "user_id": "ann"})
		for _, reader := range []string{"ann", "bob", ""} {
			args := map[string]any{"query": "zoo", "token_budget": 400, "fill": true}
			if reader != "" {
				args["user_id"] = reader
			}
			b, _ := json.Marshal(c.Call(t, "recall", args))
			low := strings.ToLower(string(b))
			if (reader == "ann") != strings.Contains(low, "cobra") || (reader == "ann") != strings.Contains(low, "aardvark") ||
				(reader == "bob") != strings.Contains(low, "bumblebee") || !strings.Contains(low, "shared") {
				t.Errorf("mcp recall for %q: %s", reader, b)
			}
			delete(args, "query")
			delete(args, "token_budget")
			delete(args, "fill")
			b, _ = json.Marshal(c.Call(t, "reflect", args))
			low = strings.ToLower(string(b))
			if (reader == "ann") != strings.Contains(low, "aardvark") || (reader == "bob") != strings.Contains(low, "bumblebee") {
				t.Errorf("mcp reflect for %q: %s", reader, b)
			}
		}
	})
}

// TestForgetUser: DELETE /v1/users/ann erases ann's rows, mirror files and
// reflection text; bob's and the shared data stay. Afterwards no table of
// the database (full-text shadow tables included), no mirror file and no
// reflection file holds ann's id or words.
func TestForgetUser(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		m, do := usersServer(t, engine)
		do("POST", "/v1/memories", `{"content":"The shared zoo map is at the gate","category":"kb"}`)
		writeUser(t, do, "ann")
		writeUser(t, do, "bob")
		// A recall, an answer, feedback with a correction: ann's.
		_, rb := do("POST", "/v1/recall", `{"query":"aardvark zoo","token_budget":300,"user_id":"ann"}`)
		var rec struct {
			RecallID string `json:"recall_id"`
		}
		_ = json.Unmarshal([]byte(rb), &rec)
		st, ib := do("POST", "/v1/interactions", fmt.Sprintf(`{"prompt":"when does the aardvark zoo open","response":"at ten","recall_id":%q,"user_id":"ann"}`, rec.RecallID))
		if st != 201 {
			t.Fatalf("interaction: %d %s", st, ib)
		}
		var in struct {
			ID string `json:"interaction_id"`
		}
		_ = json.Unmarshal([]byte(ib), &in)
		if st, b := do("POST", "/v1/feedback", fmt.Sprintf(`{"interaction_id":%q,"thumb":"down","correction":"The aardvark zoo opens at nine sharp","user_id":"ann"}`, in.ID)); st >= 300 {
			t.Fatalf("feedback: %d %s", st, b)
		}
		if st, b := do("POST", "/v1/reflect", ``); st != 200 {
			t.Fatalf("reflect: %d %s", st, b)
		}
		reflDir := filepath.Join(m.Config.DataDir, "reflections")
		if !dirHolds(t, reflDir, "aardvark") {
			t.Fatalf("no reflection file cites ann's memories before the forget")
		}
		// Reflections are written per user: ann's words only under users/ann/.
		_ = filepath.WalkDir(reflDir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && dirHolds(t, p, "aardvark") && !strings.Contains(p, "/users/ann/") {
				t.Errorf("reflection %s outside users/ann holds ann's words", p)
			}
			return nil
		})
		mirror := m.Config.MirrorDir()
		if engine == "sqlite" {
			waitFor(t, func() bool { return dirHolds(t, mirror, "aardvark") })
		}
		_, annList := do("GET", "/v1/memories?user_id=ann&limit=50", "")
		var page struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		_ = json.Unmarshal([]byte(annList), &page)
		if len(page.Items) < 5 {
			t.Fatalf("ann has %d memories: %s", len(page.Items), annList)
		}
		// A link between two of ann's memories: its row and the event
		// that made it go with them.
		if st, b := do("POST", "/v1/memories/"+page.Items[0].ID+"/links", fmt.Sprintf(`{"to":%q,"relation":"related"}`, page.Items[1].ID)); st != 200 {
			t.Fatalf("link: %d %s", st, b)
		}

		st, fb := do("DELETE", "/v1/users/ann", "")
		if st != 200 {
			t.Fatalf("forget: %d %s", st, fb)
		}
		var res map[string]any
		_ = json.Unmarshal([]byte(fb), &res)
		for _, k := range []string{"memories", "memory_events", "sessions", "session_events", "recalls", "interactions", "feedback"} {
			if n, _ := res[k].(float64); n < 1 {
				t.Errorf("forget counted %v %s: %s", res[k], k, fb)
			}
		}

		needles := []string{"aardvark", `"ann"`, "s-ann"}
		for _, it := range page.Items {
			needles = append(needles, it.ID)
		}
		if err := m.DB.FlushRecalls(context.Background()); err != nil {
			t.Fatal(err)
		}
		scanTables(t, m, engine, needles)
		if engine == "sqlite" {
			// secure_delete, the full-text merge and the checkpoint leave
			// no bytes of the user's text in the files, free pages included.
			for _, f := range []string{"engram.db", "engram.db-wal"} {
				b, _ := os.ReadFile(filepath.Join(m.Config.DataDir, f))
				if strings.Contains(strings.ToLower(string(b)), "aardvark") {
					t.Errorf("%s still holds aardvark", f)
				}
			}
		}
		for _, dir := range []string{reflDir, mirror} {
			for _, nd := range append(needles, "Aardvark") {
				if dirHolds(t, dir, nd) {
					t.Errorf("%s still holds %q", dir, nd)
				}
			}
		}
		// bob and the shared data are untouched; ann's recall is empty of her.
		_, got := do("POST", "/v1/recall", `{"query":"zoo","token_budget":400,"fill":true,"user_id":"bob"}`)
		if !strings.Contains(got, "bumblebee") || !strings.Contains(got, "shared") {
			t.Errorf("bob after ann was forgotten: %s", got)
		}
		_, got = do("POST", "/v1/recall", `{"query":"aardvark zoo","token_budget":400,"fill":true,"user_id":"ann"}`)
		if strings.Count(strings.ToLower(got), "aardvark") != 1 { // the query itself
			t.Errorf("ann's recall after forget: %s", got)
		}
		// Forgetting again finds nothing.
		st, fb = do("DELETE", "/v1/users/ann", "")
		if st != 200 || !strings.Contains(fb, `"memories":0`) {
			t.Errorf("second forget: %d %s", st, fb)
		}
	})
}

// scanTables reads every row of every table and fails on a needle.
func scanTables(t *testing.T, m *Main, engine string, needles []string) {
	t.Helper()
	driver, dsn := "sqlite3", filepath.Join(m.Config.DataDir, "engram.db")
	if engine == "postgres" {
		driver, dsn = "pgx", m.Config.Store.DSN
	}
	sqlDB, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	q := `SELECT name FROM sqlite_master WHERE type = 'table'`
	if engine == "postgres" {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
	}
	tables := queryStrings(t, sqlDB, q)
	if len(tables) < 10 {
		t.Fatalf("only %d tables", len(tables))
	}
	for _, table := range tables {
		rows, err := sqlDB.Query(`SELECT * FROM ` + table)
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				var s string
				switch v := v.(type) {
				case []byte:
					s = string(v)
				case string:
					s = v
				default:
					continue
				}
				low := strings.ToLower(s)
				for _, nd := range needles {
					if strings.Contains(low, strings.ToLower(nd)) {
						t.Errorf("table %s column %s holds %q: %s", table, cols[i], nd, clipText(s))
					}
				}
			}
		}
		rows.Close()
	}
}

func queryStrings(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func clipText(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// dirHolds reports whether a file under dir holds needle (case-blind).
func dirHolds(t *testing.T, dir, needle string) bool {
	t.Helper()
	found := false
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(strings.ToLower(string(b)), strings.ToLower(needle)) {
			found = true
		}
		return nil
	})
	return found
}
