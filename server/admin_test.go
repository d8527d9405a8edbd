package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/internal/clearance"
	"github.com/engram-memory/engram/server"
	"github.com/engram-memory/engram/store/storetest"
)

const adminSecret = "admin-secret-0123456789"

// newAdminEnv is newEnv with the admin API, export and import on.
func newAdminEnv(t testing.TB, engine string) *env {
	t.Helper()
	db := storetest.Open(t, engine)
	lim := configs.Default().Limits
	s, err := server.New(server.Config{
		Memories: clearance.Memories{MemoryService: db}, Auth: db, Health: db, AdminKey: adminSecret, Admin: db, Transfer: db,
		Limits: server.Limits{MaxBodyBytes: 1 << 20, MaxImportBytes: 1 << 20, MaxJSONDepth: 32, MaxBatch: lim.MaxBatch, Keys: lim.KeyLimits()},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &env{db: db, h: s, srv: srv}
}

// TestAdminOff: without an admin key the admin API does not exist.
func TestAdminOff(t *testing.T) {
	e := newEnv(t, "sqlite")
	key, _ := e.tenant(t, "acme")
	for _, k := range []string{"", key, adminSecret} {
		wantError(t, e.do(t, "GET", "/v1/admin/tenants", k, ""), http.StatusNotFound, "not_found")
	}
}

// TestAdminAPI: tenants, keys, quotas and clearances through the admin
// key, every write's failure cases, and who may not call it.
func TestAdminAPI(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newAdminEnv(t, engine)
		tenantKey, _ := e.tenant(t, "home")
		A := adminSecret

		// Who may call it.
		wantError(t, e.do(t, "GET", "/v1/admin/tenants", "", ""), http.StatusUnauthorized, "unauthorized")
		wantError(t, e.do(t, "GET", "/v1/admin/tenants", "not-the-admin-key-at-all", ""), http.StatusUnauthorized, "unauthorized")
		wantError(t, e.do(t, "GET", "/v1/admin/tenants", tenantKey, ""), http.StatusForbidden, "forbidden", "tenant key")
		wantError(t, e.do(t, "POST", "/v1/admin/tenants", tenantKey, `{"name":"evil"}`), http.StatusForbidden, "forbidden")
		wantError(t, e.do(t, "GET", "/v1/memories", A, ""), http.StatusUnauthorized, "unauthorized")

		// Tenants.
		wantError(t, e.do(t, "POST", "/v1/admin/tenants", A, `{"name":`), http.StatusBadRequest, "invalid")
		wantError(t, e.do(t, "POST", "/v1/admin/tenants", A, `{"name":"Bad Name"}`), http.StatusBadRequest, "invalid")
		wantError(t, e.do(t, "POST", "/v1/admin/tenants", A, `{"name":"x","extra":1}`), http.StatusBadRequest, "invalid")
		r := e.do(t, "POST", "/v1/admin/tenants", A, `{"name":"acme"}`)
		wantStatus(t, r, http.StatusCreated)
		if o := r.object(t); o["name"] != "acme" || o["withhold"] != "omit" {
			t.Fatalf("created tenant: %s", r)
		}
		wantError(t, e.do(t, "POST", "/v1/admin/tenants", A, `{"name":"acme"}`), http.StatusConflict, "conflict")
		r = e.do(t, "GET", "/v1/admin/tenants", A, "")
		wantStatus(t, r, http.StatusOK)
		if !strings.Contains(string(r.Body), `"acme"`) || !strings.Contains(string(r.Body), `"home"`) {
			t.Fatalf("tenant list: %s", r)
		}
		wantError(t, e.do(t, "GET", "/v1/admin/tenants/nope", A, ""), http.StatusNotFound, "not_found")

		// Keys: the secret once, stored hashed, usable at once.
		wantError(t, e.do(t, "POST", "/v1/admin/tenants/nope/keys", A, `{"name":"k"}`), http.StatusNotFound, "not_found")
		wantError(t, e.do(t, "POST", "/v1/admin/tenants/acme/keys", A, `{"clearance":"top"}`), http.StatusBadRequest, "invalid", "clearance")
		r = e.do(t, "POST", "/v1/admin/tenants/acme/keys", A, `{"name":"app"}`)
		wantStatus(t, r, http.StatusCreated)
		var created struct {
			Key struct {
				ID        string `json:"id"`
				Clearance string `json:"clearance"`
			} `json:"key"`
			Secret string `json:"secret"`
		}
		if err := json.Unmarshal(r.Body, &created); err != nil || !strings.HasPrefix(created.Secret, "egk_") || created.Key.Clearance != "internal" {
			t.Fatalf("created key: %s", r)
		}
		wantStatus(t, e.do(t, "GET", "/v1/memories", created.Secret, ""), http.StatusOK)
		r = e.do(t, "GET", "/v1/admin/tenants/acme/keys", A, "")
		wantStatus(t, r, http.StatusOK)
		if strings.Contains(string(r.Body), created.Secret) || strings.Contains(string(r.Body), "hash") || !strings.Contains(string(r.Body), created.Key.ID) {
			t.Fatalf("key list shows a secret or misses the key: %s", r)
		}
		wantError(t, e.do(t, "GET", "/v1/admin/tenants/nope/keys", A, ""), http.StatusNotFound, "not_found")

		// Clearance.
		wantError(t, e.do(t, "PATCH", "/v1/admin/keys/"+created.Key.ID, A, `{"clearance":"top"}`), http.StatusBadRequest, "invalid")
		wantError(t, e.do(t, "PATCH", "/v1/admin/keys/key_nope", A, `{"clearance":"secret"}`), http.StatusNotFound, "not_found")
		wantError(t, e.do(t, "PATCH", "/v1/admin/keys/"+created.Key.ID, A, `{"mask_pii":"yes"}`), http.StatusBadRequest, "invalid")
		r = e.do(t, "PATCH", "/v1/admin/keys/"+created.Key.ID, A, `{"clearance":"confidential","mask_pii":true}`)
		wantStatus(t, r, http.StatusOK)
		if o := r.object(t); o["clearance"] != "confidential" || o["mask_pii"] != true {
			t.Fatalf("patched key: %s", r)
		}

		// Quotas, per tenant.
		wantError(t, e.do(t, "PATCH", "/v1/admin/tenants/acme", A, `{"quotas":{"max_memories":-5}}`), http.StatusBadRequest, "invalid")
		wantError(t, e.do(t, "PATCH", "/v1/admin/tenants/acme", A, `{"withhold":"hide"}`), http.StatusBadRequest, "invalid")
		wantError(t, e.do(t, "PATCH", "/v1/admin/tenants/nope", A, `{"withhold":"mask"}`), http.StatusNotFound, "not_found")
		r = e.do(t, "PATCH", "/v1/admin/tenants/acme", A, `{"quotas":{"max_memories":1}}`)
		wantStatus(t, r, http.StatusOK)
		wantStatus(t, e.do(t, "POST", "/v1/memories", created.Secret, `{"content":"one","category":"work"}`), http.StatusCreated)
		wantError(t, e.do(t, "POST", "/v1/memories", created.Secret, `{"content":"two","category":"work"}`), http.StatusForbidden, "quota_exceeded")
		wantStatus(t, e.do(t, "POST", "/v1/memories", tenantKey, `{"content":"two","category":"work"}`), http.StatusCreated)
		wantStatus(t, e.do(t, "PATCH", "/v1/admin/tenants/acme", A, `{"quotas":{"max_memories":-1}}`), http.StatusOK)
		wantStatus(t, e.do(t, "POST", "/v1/memories", created.Secret, `{"content":"two","category":"work"}`), http.StatusCreated)

		// Lifecycle.
		wantError(t, e.do(t, "POST", "/v1/admin/tenants/acme/prune", A, `{"action":"archive"}`), http.StatusBadRequest, "invalid")
		wantError(t, e.do(t, "POST", "/v1/admin/tenants/acme/prune", A, `{"action":"archive","before":"last week"}`), http.StatusBadRequest, "invalid")
		wantError(t, e.do(t, "POST", "/v1/admin/tenants/nope/prune", A, `{"action":"archive","category":"work"}`), http.StatusNotFound, "not_found")
		r = e.do(t, "POST", "/v1/admin/tenants/acme/prune", A, `{"action":"archive","category":"work","dry_run":true}`)
		wantStatus(t, r, http.StatusOK)
		if o := r.object(t); o["matched"] != 2.0 || o["archived"] != 0.0 {
			t.Fatalf("dry run: %s", r)
		}
		// By user: exactly that user's memories ("" the shared ones).
		wantStatus(t, e.do(t, "POST", "/v1/memories", created.Secret, `{"content":"ann's standup","category":"work","user_id":"ann"}`), http.StatusCreated)
		wantError(t, e.do(t, "POST", "/v1/admin/tenants/acme/prune", A, `{"action":"delete","category":"work","user_id":"a b"}`), http.StatusBadRequest, "invalid", "user_id")
		wantError(t, e.do(t, "POST", "/v1/admin/tenants/acme/prune", A, `{"action":"delete","user_id":"ann"}`), http.StatusBadRequest, "invalid")
		for _, c := range []struct {
			filter  string
			matched float64
		}{{`,"user_id":"ann"`, 1}, {`,"user_id":"bob"`, 0}, {`,"user_id":""`, 2}, {``, 3}} {
			r = e.do(t, "POST", "/v1/admin/tenants/acme/prune", A, `{"action":"delete","category":"work","dry_run":true`+c.filter+`}`)
			wantStatus(t, r, http.StatusOK)
			if o := r.object(t); o["matched"] != c.matched {
				t.Fatalf("prune dry run %s: %s", c.filter, r)
			}
		}
		r = e.do(t, "POST", "/v1/admin/tenants/acme/prune", A, `{"action":"delete","category":"work","user_id":"ann"}`)
		wantStatus(t, r, http.StatusOK)
		if o := r.object(t); o["deleted"] != 1.0 {
			t.Fatalf("prune ann: %s", r)
		}
		if p := e.do(t, "GET", "/v1/memories?user_id=ann", created.Secret, "").page(t); len(p.Items) != 0 {
			t.Fatalf("ann's memories after the prune: %d", len(p.Items))
		}
		r = e.do(t, "POST", "/v1/admin/tenants/acme/prune", A, `{"action":"delete","older_than_days":0}`)
		wantStatus(t, r, http.StatusOK)
		if o := r.object(t); o["deleted"] != 2.0 {
			t.Fatalf("prune: %s", r)
		}
		wantError(t, e.do(t, "POST", "/v1/admin/tenants/acme/reset", A, `{}`), http.StatusBadRequest, "invalid", "confirm")
		wantError(t, e.do(t, "POST", "/v1/admin/tenants/acme/reset", A, `{"confirm":"home"}`), http.StatusBadRequest, "invalid")
		r = e.do(t, "POST", "/v1/admin/tenants/acme/reset", A, `{"confirm":"acme"}`)
		wantStatus(t, r, http.StatusOK)
		if !strings.Contains(string(r.Body), `"memories":3`) {
			t.Fatalf("reset: %s", r)
		}
		if p := e.do(t, "GET", "/v1/memories?include_deleted=true&include_archived=true", created.Secret, "").page(t); len(p.Items) != 0 {
			t.Fatalf("after reset: %d memories", len(p.Items))
		}
		if p := e.do(t, "GET", "/v1/memories", tenantKey, "").page(t); len(p.Items) != 1 {
			t.Fatalf("another tenant's memories after a reset: %d", len(p.Items))
		}

		// Revocation.
		wantStatus(t, e.do(t, "DELETE", "/v1/admin/keys/"+created.Key.ID, A, ""), http.StatusNoContent)
		wantError(t, e.do(t, "GET", "/v1/memories", created.Secret, ""), http.StatusUnauthorized, "unauthorized")
		wantError(t, e.do(t, "DELETE", "/v1/admin/keys/"+created.Key.ID, A, ""), http.StatusNotFound, "not_found")
		wantError(t, e.do(t, "GET", "/v1/admin/tenants", created.Secret, ""), http.StatusUnauthorized, "unauthorized")
	})
}
