package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram/store/storetest"
)

// writeAs stores a memory through key and returns its id.
func writeAs(t *testing.T, m *Main, key, body string) string {
	t.Helper()
	s, _, b := call(t, m, "POST", "/v1/memories", key, "application/json", body)
	if s != http.StatusCreated {
		t.Fatalf("create: %d %s", s, b)
	}
	var out struct {
		Memory struct {
			ID string `json:"id"`
		} `json:"memory"`
	}
	_ = json.Unmarshal([]byte(b), &out)
	return out.Memory.ID
}

// correct posts a feedback carrying a correction through key and returns
// the memory the correction became.
func correct(t *testing.T, m *Main, key, body string) string {
	t.Helper()
	s, _, b := call(t, m, "POST", "/v1/feedback", key, "application/json", body)
	var fb struct {
		Knowledge struct {
			MemoryID string `json:"memory_id"`
		} `json:"knowledge"`
	}
	if err := json.Unmarshal([]byte(b), &fb); err != nil || s != http.StatusCreated || fb.Knowledge.MemoryID == "" {
		t.Fatalf("feedback with a correction: %d %s", s, b)
	}
	return fb.Knowledge.MemoryID
}

// mcpTool calls one MCP tool over HTTP with key and returns its
// structured result as JSON.
func mcpTool(t *testing.T, m *Main, key, name string, args map[string]any) string {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: m.URL() + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport(key)}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "engram-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("mcp %s: %v %+v", name, err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	return string(b)
}

// TestClearanceDeduplicatedWrite: a create is a duplicate only of a
// memory at its own level, so a key writing at its level the text of a
// memory above its clearance stores its own copy (REST, batch, MCP) and
// learns nothing of the other, not even that it exists; a second write
// of its text finds its own copy. A write up to that level still meets
// the stored memory, masked.
func TestClearanceDeduplicatedWrite(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		m, secret, internal, _ := acmeKeys(t, engine)
		conf := writeAs(t, m, secret, `{"content":"Project Falcon launches in May","category":"work","security_level":"confidential",
			"tags":["codename-osprey"],"summary":"acquisition of Initech","context":"board memo 7","source":{"doc":"board-minutes-q3"}}`)
		_, _, before := call(t, m, "GET", "/v1/memories/"+conf, secret, "", "")
		details := func(b string) bool {
			return strings.Contains(b, "osprey") || strings.Contains(b, "Initech") || strings.Contains(b, "board")
		}
		leaks := func(b string) bool { return details(b) || strings.Contains(b, conf) }
		var own string
		for i, p := range []string{"/v1/memories", "/v1/memories/batch", "/v1/memories"} {
			body := `{"content":"Project   Falcon launches in May","category":"work"}`
			if p == "/v1/memories/batch" {
				body = `{"memories":[` + body + `]}`
			}
			s, h, b := call(t, m, "POST", p, internal, "application/json", body)
			if s >= 300 || leaks(b) || h.Get("X-Engram-Withheld") != "" || !strings.Contains(b, `"security_level":"internal"`) {
				t.Fatalf("POST %s through an internal key: %d %v %s", p, s, h, b)
			}
			if dup := strings.Contains(b, `"deduplicated":true`); dup != (i > 0) {
				t.Errorf("POST %s (write %d): deduplicated %v: %s", p, i, dup, b)
			}
			if i == 0 {
				var res struct {
					Memory struct {
						ID string `json:"id"`
					} `json:"memory"`
				}
				_ = json.Unmarshal([]byte(b), &res)
				own = res.Memory.ID
			} else if !strings.Contains(b, own) {
				t.Errorf("POST %s: the duplicate is not the key's own copy %s: %s", p, own, b)
			}
		}
		if b := mcpTool(t, m, internal, "remember", map[string]any{"content": "Project Falcon launches in May", "category": "work"}); leaks(b) || !strings.Contains(b, own) {
			t.Errorf("MCP remember through an internal key: %s", b)
		}
		s, h, b := call(t, m, "POST", "/v1/memories", internal, "application/json", `{"content":"Project Falcon launches in May","category":"work","security_level":"confidential"}`)
		if s >= 300 || details(b) || !strings.Contains(b, `"deduplicated":true`) || h.Get("X-Engram-Withheld") == "" {
			t.Errorf("a write up to the stored memory's level: %d %v %s", s, h, b)
		}
		if _, _, after := call(t, m, "GET", "/v1/memories/"+conf, secret, "", ""); after != before {
			t.Errorf("the confidential memory changed:\n%s\n%s", before, after)
		}
	})
}

// TestClearanceLearningDoors: the learning routes treat a memory above
// the key's clearance as the reads do: its impact is 404, feedback on it
// is 404 and changes nothing, and an alias to its key is refused.
func TestClearanceLearningDoors(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		m, secret, internal, _ := acmeKeys(t, engine)
		conf := writeAs(t, m, secret, `{"content":"Osprey deal closes with Initech in May","category":"work","security_level":"confidential","tags":["acquisition-initech"]}`)
		if s, _, b := call(t, m, "POST", "/v1/feedback", secret, "application/json", `{"memory_id":"`+conf+`","thumb":"up"}`); s != http.StatusCreated {
			t.Fatalf("feedback: %d %s", s, b)
		}
		_, _, before := call(t, m, "GET", "/v1/memories/"+conf, secret, "", "")
		if s, _, b := call(t, m, "GET", "/v1/memories/"+conf+"/impact", internal, "", ""); s != http.StatusNotFound || strings.Contains(b, "nitech") {
			t.Errorf("impact through an internal key: %d %s, want 404", s, b)
		}
		if s, _, b := call(t, m, "POST", "/v1/feedback", internal, "application/json", `{"memory_id":"`+conf+`","thumb":"down"}`); s != http.StatusNotFound {
			t.Errorf("feedback through an internal key: %d %s, want 404", s, b)
		}
		if _, _, after := call(t, m, "GET", "/v1/memories/"+conf, secret, "", ""); after != before {
			t.Errorf("a refused feedback changed the memory:\n%s\n%s", before, after)
		}

		if s, _, b := call(t, m, "PUT", "/v1/keys/office/wifi", secret, "application/json", `{"content":"tangerine opens the guest wifi","source":"it desk"}`); s >= 300 {
			t.Fatalf("put key: %d %s", s, b)
		}
		_, _, b := call(t, m, "GET", "/v1/keys/office/wifi", secret, "", "")
		var km struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal([]byte(b), &km)
		if s, _, b := call(t, m, "PATCH", "/v1/memories/"+km.ID, secret, "application/json", `{"security_level":"confidential"}`); s != http.StatusOK {
			t.Fatalf("patch: %d %s", s, b)
		}
		if s, _, b := call(t, m, "PUT", "/v1/aliases/guest/net", internal, "application/json", `{"key":"/office/wifi"}`); s != http.StatusNotFound {
			t.Errorf("an alias to a confidential key through an internal key: %d %s, want 404", s, b)
		}
		if s, _, b := call(t, m, "GET", "/v1/memories/"+km.ID+"/aliases", internal, "", ""); s != http.StatusNotFound {
			t.Errorf("a confidential memory's aliases through an internal key: %d %s, want 404", s, b)
		}
	})
}

// TestReflectGroupNames: a group key names a tag or subcategory, so the
// outcomes of POST /v1/reflect and MCP reflect name only groups whose
// reflection the key may read and, for an end user, only the shared
// groups and the user's own; a masked reflection's group is masked too.
func TestReflectGroupNames(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		m, secret, internal, _ := acmeKeys(t, engine)
		for _, c := range []string{"Initech due diligence starts Monday", "Initech board approved the bid", "Initech price is 40 million"} {
			writeAs(t, m, secret, `{"content":"`+c+`","category":"work","security_level":"confidential","tags":["acquisition-initech"]}`)
		}
		for _, c := range []string{"Meeting the divorce lawyer on Monday", "Divorce papers are in the drawer", "Divorce hearing set for June"} {
			writeAs(t, m, secret, `{"content":"`+c+`","category":"life","user_id":"bob","tags":["divorce-lawyer"]}`)
		}
		if s, _, b := call(t, m, "POST", "/v1/reflect", internal, "application/json", `{}`); s != http.StatusOK || strings.Contains(b, "initech") {
			t.Errorf("POST /v1/reflect through an internal key: %d %s", s, b)
		}
		if b := mcpTool(t, m, secret, "reflect", map[string]any{"user_id": "ann"}); strings.Contains(b, "bob") || strings.Contains(b, "divorce") {
			t.Errorf("MCP reflect for ann: %s", b)
		}
		if s, _, b := call(t, m, "PATCH", "/v1/admin/tenants/acme", testAdminKey, "application/json", `{"withhold":"mask"}`); s != http.StatusOK {
			t.Fatalf("withhold=mask: %d %s", s, b)
		}
		if _, _, b := call(t, m, "GET", "/v1/reflections", internal, "", ""); strings.Contains(b, "initech") || !strings.Contains(b, "[withheld: confidential]") {
			t.Errorf("a masked reflection through an internal key: %s", b)
		}
		// Masked, bob's confidential group is still bob's: MCP reflect for
		// ann does not show it.
		for _, c := range []string{"Payroll for bob is due Friday", "Payroll of bob moved to May", "Payroll: bob's raise approved"} {
			writeAs(t, m, secret, `{"content":"`+c+`","category":"work","user_id":"bob","security_level":"confidential","tags":["payroll"]}`)
		}
		b := mcpTool(t, m, internal, "reflect", map[string]any{"user_id": "ann"})
		_, _, list := call(t, m, "GET", "/v1/reflections?user_id=bob", secret, "", "")
		var bobs struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(list), &bobs); err != nil || len(bobs.Items) != 2 {
			t.Fatalf("bob's reflections: %v %s", err, list)
		}
		for _, r := range bobs.Items {
			if strings.Contains(b, r.ID) {
				t.Errorf("MCP reflect for ann, masked: names bob's reflection %s: %s", r.ID, b)
			}
		}
	})
}

// TestFeedbackOtherUsersAnswer: a feedback naming end user ann may not
// rate an answer given to bob (404, nothing changes): it would credit and
// supersede bob's memories, write its correction as his, and put his
// prompt and answer among ann's pairs (docs/users.md). A shared answer
// rated for ann makes ann's correction hers.
func TestFeedbackOtherUsersAnswer(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		m, k, _, _ := acmeKeys(t, engine)
		bob := writeAs(t, m, k, `{"content":"The user's dog is named Rex","category":"life","user_id":"bob"}`)
		answer := func(user string) (recall, interaction string) {
			_, _, b := call(t, m, "POST", "/v1/recall", k, "application/json", `{"query":"what is my dog named","token_budget":300,"user_id":"`+user+`"}`)
			var rec struct {
				ID string `json:"recall_id"`
			}
			_ = json.Unmarshal([]byte(b), &rec)
			_, _, b = call(t, m, "POST", "/v1/interactions", k, "application/json",
				`{"prompt":"what is my dog named?","response":"Your dog is named Rex","recall_id":"`+rec.ID+`","user_id":"`+user+`"}`)
			var in struct {
				ID string `json:"interaction_id"`
			}
			_ = json.Unmarshal([]byte(b), &in)
			return rec.ID, in.ID
		}
		rec, in := answer("bob")
		// A shared interaction given from bob's recall is bob's answer too.
		_, _, b := call(t, m, "POST", "/v1/interactions", k, "application/json",
			`{"prompt":"what is my dog named?","response":"Your dog is named Rex","recall_id":"`+rec+`"}`)
		var via struct {
			ID string `json:"interaction_id"`
		}
		_ = json.Unmarshal([]byte(b), &via)
		_, _, before := call(t, m, "GET", "/v1/memories/"+bob, k, "", "")
		for _, body := range []string{
			`{"interaction_id":"` + in + `","thumb":"down","correction":"The user's dog is named Max","user_id":"ann"}`,
			`{"recall_id":"` + rec + `","thumb":"down","user_id":"ann"}`,
			`{"interaction_id":"` + via.ID + `","thumb":"down","user_id":"ann"}`,
		} {
			if s, _, b := call(t, m, "POST", "/v1/feedback", k, "application/json", body); s != http.StatusNotFound {
				t.Errorf("feedback for ann on bob's answer: %d %s, want 404", s, b)
			}
		}
		if _, _, after := call(t, m, "GET", "/v1/memories/"+bob, k, "", ""); after != before {
			t.Errorf("bob's memory changed:\n%s\n%s", before, after)
		}
		if _, _, pairs := call(t, m, "GET", "/v1/pairs?format=trl&user_id=ann", k, "", ""); strings.Contains(pairs, "Rex") {
			t.Errorf("ann's pairs carry bob's answer: %s", pairs)
		}

		_, shared := answer("")
		fixed := correct(t, m, k, `{"interaction_id":"`+shared+`","thumb":"down","correction":"The user's cat is named Miso","user_id":"ann"}`)
		if _, _, c := call(t, m, "GET", "/v1/memories/"+fixed, k, "", ""); !strings.Contains(c, `"user_id":"ann"`) {
			t.Errorf("ann's correction of a shared answer: %s", c)
		}
	})
}

// TestClearanceCorrection: the correction of an answer that rested on a
// confidential memory is stored confidential, so an internal key does not
// read it; nor does it read the pairs and judged answers that quote such
// an answer (GET /v1/pairs, every format), which a secret key exports.
func TestClearanceCorrection(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		m, secret, internal, _ := acmeKeys(t, engine)
		conf := writeAs(t, m, secret, `{"content":"The wifi password is tangerine","category":"work","security_level":"confidential"}`)
		_, _, b := call(t, m, "POST", "/v1/recall", secret, "application/json", `{"query":"wifi password","token_budget":300}`)
		var rec struct {
			ID string `json:"recall_id"`
		}
		if err := json.Unmarshal([]byte(b), &rec); err != nil || !strings.Contains(b, conf) {
			t.Fatalf("recall: %v %s", err, b)
		}
		_, _, b = call(t, m, "POST", "/v1/interactions", secret, "application/json",
			`{"prompt":"what is the wifi password?","response":"The wifi password is tangerine","recall_id":"`+rec.ID+`"}`)
		var in struct {
			ID string `json:"interaction_id"`
		}
		_ = json.Unmarshal([]byte(b), &in)
		fixed := correct(t, m, secret, `{"interaction_id":"`+in.ID+`","thumb":"down","correction":"The wifi password is tangerine-mango now"}`)
		if _, _, c := call(t, m, "GET", "/v1/memories/"+fixed, secret, "", ""); !strings.Contains(c, `"security_level":"confidential"`) {
			t.Errorf("the correction's level: %s", c)
		}
		if s, _, c := call(t, m, "GET", "/v1/memories/"+fixed, internal, "", ""); s != http.StatusNotFound {
			t.Errorf("the correction through an internal key: %d %s", s, c)
		}
		for _, f := range []string{"trl", "trl-unpaired", "openai"} {
			// A stream's headers go before its lines: no withheld count.
			if s, _, b := call(t, m, "GET", "/v1/pairs?format="+f, internal, "", ""); s != http.StatusOK || strings.Contains(b, "tangerine") {
				t.Errorf("pairs (%s) through an internal key: %d %s", f, s, b)
			}
			if _, _, b := call(t, m, "GET", "/v1/pairs?format="+f, secret, "", ""); !strings.Contains(b, "tangerine") {
				t.Errorf("pairs (%s) through a secret key: %s", f, b)
			}
		}
	})
}

// TestReflectJobGroupNames: a reflect run as a job (a large tenant) has
// no reader while it runs, so its stored outcomes are filtered when a key
// reads the job, one or in the list, as an inline reflect's are.
func TestReflectJobGroupNames(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		environ := []string{"ENGRAM_STORE_DRIVER=" + engine, "ENGRAM_ADMIN_KEY=" + testAdminKey,
			"ENGRAM_JOBS_INLINE_MAX_MEMORIES=2", "ENGRAM_JOBS_POLL=50ms"}
		if engine == "postgres" {
			environ = append(environ, "ENGRAM_STORE_DSN="+storetest.Options(t, engine).DSN)
		}
		m := boot(t, t.TempDir(), environ)
		if s, _, b := call(t, m, "POST", "/v1/admin/tenants", testAdminKey, "application/json", `{"name":"acme"}`); s != http.StatusCreated {
			t.Fatalf("create tenant: %d %s", s, b)
		}
		secret, internal := adminKey(t, m, "acme", `{"name":"ops","clearance":"secret"}`), adminKey(t, m, "acme", `{"name":"bot"}`)
		for _, c := range []string{"Initech due diligence starts Monday", "Initech board approved the bid", "Initech price is 40 million"} {
			writeAs(t, m, secret, `{"content":"`+c+`","category":"work","security_level":"confidential","tags":["acquisition-initech"]}`)
		}
		s, _, b := call(t, m, "POST", "/v1/reflect", internal, "application/json", `{}`)
		var acc struct {
			JobID string `json:"job_id"`
		}
		if err := json.Unmarshal([]byte(b), &acc); err != nil || s != http.StatusAccepted {
			t.Fatalf("reflect on a large tenant: %d %s", s, b)
		}
		for !strings.Contains(b, `"status":"done"`) {
			if s, _, b = call(t, m, "GET", "/v1/jobs/"+acc.JobID, secret, "", ""); s != http.StatusOK || strings.Contains(b, `"status":"failed"`) {
				t.Fatalf("job: %d %s", s, b)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if !strings.Contains(b, "initech") {
			t.Fatalf("a secret key reads the job's groups: %s", b)
		}
		for _, p := range []string{"/v1/jobs/" + acc.JobID, "/v1/jobs"} {
			if s, _, b := call(t, m, "GET", p, internal, "", ""); s != http.StatusOK || strings.Contains(b, "initech") {
				t.Errorf("GET %s through an internal key: %d %s", p, s, b)
			}
		}
	})
}
