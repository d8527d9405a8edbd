package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/engram-memory/engram/server"
	"github.com/engram-memory/engram/server/openapitest"
)

// TestOpenAPIResponses drives every documented operation of the real
// server (as engram serve wires it) and validates each answer — the
// successes and the refusals — against server/openapi.json. An operation
// added to the document needs a request here; the message names it.
func TestOpenAPIResponses(t *testing.T) {
	doc, err := openapitest.Parse(server.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	m := boot(t, t.TempDir(), []string{"ENGRAM_ADMIN_KEY=" + testAdminKey})
	key, err := os.ReadFile(m.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	tr := &openapitest.Transport{Doc: doc}
	client := &http.Client{Transport: tr}
	// send makes one request with bearer (none when empty) and returns
	// the answer's JSON object (if it is one), body and headers.
	send := func(method, path, contentType, body, bearer string, want int) (map[string]any, []byte, http.Header) {
		t.Helper()
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, m.URL()+path, r)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, b)
		}
		var out map[string]any
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			_ = json.Unmarshal(b, &out)
		}
		return out, b, resp.Header
	}
	call := func(method, path, contentType, body string, auth bool, want int) map[string]any {
		t.Helper()
		bearer := ""
		if auth {
			bearer = strings.TrimSpace(string(key))
		}
		out, _, _ := send(method, path, contentType, body, bearer, want)
		return out
	}
	const js = "application/json"
	do := func(method, path, body string, want int) map[string]any {
		t.Helper()
		ct := ""
		if body != "" {
			ct = js
		}
		return call(method, path, ct, body, true, want)
	}

	call("GET", "/healthz", "", "", false, 200)
	call("GET", "/metrics", "", "", false, 200)
	call("GET", "/openapi.json", "", "", false, 200)
	call("GET", "/v1/memories", "", "", false, 401)

	created := do("POST", "/v1/memories", `{"content":"User drinks coffee black, no sugar","category":"preference","tags":["coffee"]}`, 201)
	id := created["memory"].(map[string]any)["id"].(string)
	do("POST", "/v1/memories", `{"content":"User drinks coffee black, no sugar","category":"preference"}`, 200)
	do("POST", "/v1/memories", `{"content":""}`, 400)
	do("POST", "/v1/memories", `{"content":"Thanks, sounds good!","gate":true}`, 422)
	do("POST", "/v1/memories", `{"content":"User's cat Dumpling only eats salmon kibble","gate":true}`, 201)
	do("POST", "/v1/memories/batch", `{"memories":[{"content":"Standup is at 9:30","category":"work"},{"content":"Sprint review on Fridays","category":"work"},{"content":"Deploys need two approvals","category":"work"}]}`, 200)
	do("POST", "/v1/memories/batch", `{"memories":[{"content":"standup, sprint, deploys, approvals","gate":true}]}`, 422)
	do("GET", "/v1/memories?q=coffee&limit=10", "", 200)
	do("GET", "/v1/memories/"+id, "", 200)
	do("GET", "/v1/memories/mem_doesnotexist0000000", "", 404)
	do("PATCH", "/v1/memories/"+id, `{"importance":0.9,"version":1}`, 200)
	do("PATCH", "/v1/memories/"+id, `{"importance":0.8,"version":1}`, 409)
	do("GET", "/v1/memories/"+id+"/history", "", 200)
	do("POST", "/v1/memories/"+id+"/rollback", `{"version":1}`, 200)
	do("POST", "/v1/memories/"+id+"/release", "", 409)
	linked := do("POST", "/v1/memories", `{"content":"User's espresso machine is a Gaggia","category":"preference"}`, 201)
	to := linked["memory"].(map[string]any)["id"].(string)
	do("POST", "/v1/memories/"+id+"/links", `{"to":"`+to+`","relation":"related"}`, 200)
	do("POST", "/v1/memories/"+id+"/links", `{"to":"`+to+`","relation":"supports"}`, 200)
	do("POST", "/v1/memories/"+id+"/links", `{"to":"`+id+`"}`, 400)
	do("GET", "/v1/memories/"+id+"/links", "", 200)
	do("DELETE", "/v1/memories/"+id+"/links/"+to+"/supports", "", 200)
	do("DELETE", "/v1/memories/"+id+"/links/"+to, "", 200)
	do("DELETE", "/v1/memories/"+id+"/links/"+to, "", 404)

	do("PUT", "/v1/keys/user/preference/style", `{"content":{"text":"answers in short bullet points"},"source":"chat"}`, 200)
	do("GET", "/v1/keys/user/preference/style", "", 200)
	do("PUT", "/v1/keys/kb/doc", `{"content":"x","source":{"kind":"web"}}`, 400)
	do("PUT", "/v1/keys/user/plan", `{"content":"昨天用户把会议改到了下午。","source":"chat","gate":true}`, 422)
	do("DELETE", "/v1/keys/user/preference/style", "", 200)
	do("PUT", "/v1/keys/user/pet", `{"content":"a grey cat called Dumpling","source":"chat","user_id":"ann"}`, 200)
	do("PUT", "/v1/aliases/user/cat", `{"key":"/user/pet","user_id":"ann"}`, 200)
	do("PUT", "/v1/aliases/user/dog", `{"key":"/user/none"}`, 404)
	do("GET", "/v1/aliases/user/cat?user_id=ann", "", 200)
	do("GET", "/v1/keys/user/cat?user_id=ann", "", 200)
	pet := do("GET", "/v1/keys/user/pet?user_id=ann", "", 200)["id"].(string)
	do("GET", "/v1/memories/"+pet+"/aliases", "", 200)
	do("DELETE", "/v1/aliases/user/cat?user_id=ann", "", 200)
	do("DELETE", "/v1/aliases/user/cat?user_id=ann", "", 404)
	do("GET", "/v1/keys/user/preference/style", "", 404)

	do("POST", "/v1/route", `{"query":"Should I take the job?"}`, 200)
	recall := do("POST", "/v1/recall", `{"query":"How does the user take their coffee?","token_budget":200}`, 200)
	do("POST", "/v1/recall", `{"query":"","token_budget":200}`, 400)
	do("POST", "/v1/recall", `{"query":"How does the user take their coffee?","token_budget":200,"hops":2}`, 200)
	do("POST", "/v1/recall", `{"query":"coffee","token_budget":200,"hops":3}`, 400)
	do("GET", "/v1/context?token_limit=200", "", 200)
	do("GET", "/v1/boot", "", 200)

	recallID := recall["recall_id"].(string)
	a := do("POST", "/v1/interactions", `{"prompt":"Tea or coffee?","response":"Tea.","turn_id":"t1","recall_id":"`+recallID+`"}`, 201)
	b := do("POST", "/v1/interactions", `{"prompt":[{"role":"user","content":"Tea or coffee?"}],"response":"Coffee, black.","turn_id":"t1"}`, 201)
	do("POST", "/v1/feedback", `{"interaction_id":"`+a["interaction_id"].(string)+`","thumb":"down"}`, 201)
	up := `{"interaction_id":"` + b["interaction_id"].(string) + `","thumb":"up","idempotency_key":"k1"}`
	do("POST", "/v1/feedback", up, 201)
	do("POST", "/v1/feedback", up, 200)
	do("POST", "/v1/feedback", `{"thumb":"up"}`, 400)
	rated := do("POST", "/v1/feedback", `{"recall_id":"`+recallID+`","rating":5}`, 201)
	do("GET", "/v1/feedback/"+rated["feedback_id"].(string), "", 200)
	do("GET", "/v1/feedback/fb_doesnotexist00000000", "", 404)
	for _, f := range []string{"trl", "trl-conversational", "trl-unpaired", "openai"} {
		do("GET", "/v1/pairs?format="+f, "", 200)
	}
	do("GET", "/v1/pairs?format=kto", "", 400)
	do("GET", "/v1/pairs?format=trl&user_id=ann", "", 200)
	do("GET", "/v1/pairs?format=trl-unpaired&user_id=", "", 200)
	do("GET", "/v1/pairs?format=trl&user_id=a%20b", "", 400)
	do("GET", "/v1/memories/"+id+"/impact", "", 200)

	reflected := do("POST", "/v1/reflect", `{}`, 200)
	do("GET", "/v1/reflections", "", 200)
	do("GET", "/v1/reflections?user_id=ann", "", 200)
	do("GET", "/v1/reflections?user_id=..", "", 400)
	written := reflected["written"].([]any)
	if len(written) == 0 {
		t.Fatalf("the reflector wrote nothing: %v", reflected)
	}
	do("GET", "/v1/reflections/"+written[0].(map[string]any)["id"].(string), "", 200)
	// A small tenant reflects and sleeps inline: no job (TestReflectJob
	// drives them).
	do("POST", "/v1/sleep", "", 200)
	do("GET", "/v1/jobs", "", 200)
	do("GET", "/v1/jobs?status=lost", "", 400)
	do("GET", "/v1/jobs/job_none", "", 404)

	do("POST", "/v1/sessions/s1/events", `{"events":[{"type":"message","role":"user","content":"I moved to Lisbon last week"}]}`, 201)
	do("POST", "/v1/sessions/s1/events", `{"type":"tool_call","name":"search","args":{"q":"Lisbon"}}`, 201)
	do("GET", "/v1/sessions/s1/events", "", 200)
	do("GET", "/v1/sessions/s1/context?token_limit=200", "", 200)
	do("PUT", "/v1/sessions/s1/state", `{"state":{"step":1},"schema":{"type":"object","properties":{"step":{"type":"integer"}}}}`, 200)
	do("PATCH", "/v1/sessions/s1/state", `{"step":"two"}`, 422)
	do("PATCH", "/v1/sessions/s1/state", `{"step":2}`, 200)
	do("GET", "/v1/sessions/s1/state", "", 200)
	do("PUT", "/v1/agents/ada/persona", `{"markdown":"# Ada\nA careful assistant."}`, 200)
	call("PUT", "/v1/agents/ada/persona", "text/markdown", "# Ada\nA careful, brief assistant.", true, 200)
	do("GET", "/v1/agents/ada/persona", "", 200)
	do("POST", "/v1/prompt", `{"query":"Where do I live?","token_budget":300,"agent_id":"ada","session_id":"s1"}`, 200)
	do("POST", "/v1/prompt", `{"query":"Where do I live?","token_budget":300,"hops":1}`, 200)
	do("POST", "/v1/sessions/s1/end", `{"outcome":"success"}`, 200)
	do("DELETE", "/v1/memories/"+id, "", 200)
	do("POST", "/v1/memories", `{"content":"Ann keeps bees","category":"life","user_id":"ann"}`, 201)
	do("POST", "/v1/recall", `{"query":"bees","token_budget":200,"user_id":"ann"}`, 200)
	do("GET", "/v1/memories?user_id=ann", "", 200)
	do("DELETE", "/v1/users/ann", "", 200)
	do("DELETE", "/v1/users/a%20b", "", 400)

	// The admin API, with the admin key; a tenant key there is forbidden.
	admin := func(method, path, body string, want int) map[string]any {
		t.Helper()
		ct := ""
		if body != "" {
			ct = js
		}
		out, _, _ := send(method, path, ct, body, testAdminKey, want)
		return out
	}
	do("GET", "/v1/admin/tenants", "", 403)
	admin("POST", "/v1/admin/tenants", `{"name":"acme"}`, 201)
	admin("POST", "/v1/admin/tenants", `{"name":"Not A Name"}`, 400)
	admin("GET", "/v1/admin/tenants", "", 200)
	admin("GET", "/v1/admin/tenants/acme", "", 200)
	admin("GET", "/v1/admin/tenants/nope", "", 404)
	admin("PATCH", "/v1/admin/tenants/acme", `{"quotas":{"max_memories":1000,"max_sessions":-1},"withhold":"mask"}`, 200)
	admin("PATCH", "/v1/admin/tenants/acme", `{"withhold":"hide"}`, 400)
	admin("PATCH", "/v1/admin/tenants/acme", `{"gate":"","gate_mode":""}`, 200)
	acme := admin("POST", "/v1/admin/tenants/acme/keys", `{"name":"ops","clearance":"secret"}`, 201)["secret"].(string)
	admin("POST", "/v1/admin/tenants/acme/keys", `{"clearance":"top"}`, 400)
	ops := admin("POST", "/v1/admin/tenants/"+m.Config.Auth.DefaultTenant+"/keys", `{"name":"ops","clearance":"internal","mask_pii":true}`, 201)
	opsKey := ops["key"].(map[string]any)["id"].(string)
	admin("PATCH", "/v1/admin/keys/"+opsKey, `{"clearance":"secret","mask_pii":false}`, 200)
	admin("PATCH", "/v1/admin/keys/key_doesnotexist", `{"clearance":"secret"}`, 404)
	admin("GET", "/v1/admin/tenants/acme/keys", "", 200)

	// A memory above the default key's clearance is withheld, and counted.
	send("POST", "/v1/memories", js, `{"content":"The vault code is in the blue binder","category":"work","security_level":"secret"}`, ops["secret"].(string), 201)
	if _, _, h := send("GET", "/v1/memories", "", "", strings.TrimSpace(string(key)), 200); h.Get(server.WithheldHeader) == "" {
		t.Errorf("GET /v1/memories with a secret memory and an internal key: no %s header", server.WithheldHeader)
	}

	// Export and import: a secret key's tenant into an empty one; the
	// default key (clearance internal) may not; a tenant with data refuses.
	const nd = "application/x-ndjson"
	do("GET", "/v1/export", "", 403)
	_, export, _ := send("GET", "/v1/export", "", "", ops["secret"].(string), 200)
	send("POST", "/v1/import?ids=remap", nd, string(export), acme, 200)
	send("POST", "/v1/import", nd, string(export), acme, 409)
	send("POST", "/v1/import", js, `{}`, acme, 415)
	_, export, _ = send("GET", "/v1/admin/tenants/acme/export", "", "", testAdminKey, 200)
	admin("POST", "/v1/admin/tenants", `{"name":"copy"}`, 201)
	send("POST", "/v1/admin/tenants/copy/import?ids=remap", nd, string(export), testAdminKey, 200)
	send("POST", "/v1/admin/tenants/copy/import?ids=sideways", nd, string(export), testAdminKey, 400)

	// Lifecycle: prune, reset, revoke.
	admin("POST", "/v1/admin/tenants/copy/prune", `{"action":"archive","category":"work","dry_run":true}`, 200)
	admin("POST", "/v1/admin/tenants/copy/prune", `{"action":"delete","older_than_days":0}`, 200)
	admin("POST", "/v1/admin/tenants/copy/prune", `{"action":"archive"}`, 400)
	admin("POST", "/v1/admin/tenants/copy/prune", `{"action":"archive","category":"work","user_id":"ann","dry_run":true}`, 200)
	admin("POST", "/v1/admin/tenants/copy/prune", `{"action":"archive","category":"work","user_id":"a b"}`, 400)
	admin("POST", "/v1/admin/tenants/copy/reset", `{"confirm":"acme"}`, 400)
	admin("POST", "/v1/admin/tenants/copy/reset", `{"confirm":"copy"}`, 200)
	admin("DELETE", "/v1/admin/keys/"+opsKey, "", 204)
	admin("DELETE", "/v1/admin/keys/"+opsKey, "", 404)

	for _, err := range tr.Errors {
		t.Error(err)
	}
	for _, op := range doc.Operations() {
		if len(tr.Seen[op]) == 0 {
			t.Errorf("%s is documented but TestOpenAPIResponses sends it no request: add one, so its answer is checked", op)
		}
	}
}
