package server_test

import (
	"net/http"
	"testing"

	"github.com/engram-memory/engram/store/storetest"
)

type apiAlias struct {
	Alias    string `json:"alias"`
	Key      string `json:"key"`
	MemoryID string `json:"memory_id"`
	UserID   string `json:"user_id"`
	Version  int64  `json:"version"`
	Valid    bool   `json:"valid"`
}

// TestAliasRoutes: PUT makes an alias, the keys routes act through it,
// GET shows it, the memory lists it, DELETE removes it; tombstoning the
// target makes it answer 404; bad input is a 4xx that changes nothing;
// another tenant and another user see nothing.
func TestAliasRoutes(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		other, _ := e.tenant(t, "beta")
		pet := e.do(t, "PUT", "/v1/keys/user/pet", key, `{"content":"a grey cat called Dumpling","source":"chat","user_id":"ann"}`).memory(t)
		wantStatus(t, e.do(t, "PUT", "/v1/keys/user/home", key, `{"content":"Lisbon","source":"chat","user_id":"ann"}`), http.StatusOK)

		r := e.do(t, "PUT", "/v1/aliases/user/%E7%8C%AB", key, `{"key":"/user/pet","user_id":"ann"}`)
		wantStatus(t, r, http.StatusOK)
		var a apiAlias
		mustDecode(t, r, &a)
		if a.Alias != "/user/猫" || a.Key != "/user/pet" || a.MemoryID != pet.ID || a.UserID != "ann" || a.Version != 2 || !a.Valid {
			t.Fatalf("alias: %+v", a)
		}
		got := e.do(t, "GET", "/v1/keys/user/猫?user_id=ann", key, "").memory(t)
		if got.ID != pet.ID {
			t.Fatalf("GET through the alias: %+v", got)
		}
		wantError(t, e.do(t, "GET", "/v1/keys/user/猫", key, ""), 404, "not_found")
		wantError(t, e.do(t, "GET", "/v1/keys/user/猫?user_id=bob", key, ""), 404, "not_found")
		w := e.do(t, "PUT", "/v1/keys/user/猫", key, `{"content":"Dumpling only eats salmon kibble","source":"chat","user_id":"ann"}`).memory(t)
		if w.ID != pet.ID || w.Version != 3 {
			t.Fatalf("PUT through the alias: %+v", w)
		}

		before := e.snapshot(t, key)
		for _, bad := range []struct {
			method, path, body string
			status             int
			code               string
		}{
			{"PUT", "/v1/aliases/user/x", `{"user_id":"ann"}`, 400, "invalid"},
			{"PUT", "/v1/aliases/user/x", `{"key":"user/pet","user_id":"ann"}`, 400, "invalid"},
			{"PUT", "/v1/aliases/user/x", `{"key":"/user/pet","user_id":"ann","weight":1}`, 400, "invalid"},
			{"PUT", "/v1/aliases/user/x", `{"key":"/user/pet","user_id":"a b"}`, 400, "invalid"},
			{"PUT", "/v1/aliases/user/%2Fx", `{"key":"/user/pet","user_id":"ann"}`, 400, "invalid"},
			{"PUT", "/v1/aliases/user/pet", `{"key":"/user/pet","user_id":"ann"}`, 400, "invalid"},
			{"PUT", "/v1/aliases/user/x", `{"key":"/user/pet"}`, 404, "not_found"},
			{"PUT", "/v1/aliases/user/x", `{"key":"/user/猫","user_id":"ann"}`, 409, "conflict"},
			{"PUT", "/v1/aliases/user/home", `{"key":"/user/pet","user_id":"ann"}`, 409, "conflict"},
			{"PUT", "/v1/aliases/user/猫", `{"key":"/user/home","user_id":"ann"}`, 409, "conflict"},
			{"GET", "/v1/aliases/user/猫?user_id=ann&x=1", "", 400, "invalid"},
			{"GET", "/v1/aliases/user/猫", "", 404, "not_found"},
			{"DELETE", "/v1/aliases/user/x?user_id=ann", "", 404, "not_found"},
			{"GET", "/v1/memories/mem_nope/aliases", "", 404, "not_found"},
		} {
			wantError(t, e.do(t, bad.method, bad.path, key, bad.body), bad.status, bad.code)
		}
		wantError(t, e.do(t, "GET", "/v1/aliases/user/猫?user_id=ann", other, ""), 404, "not_found")
		wantError(t, e.do(t, "GET", "/v1/keys/user/猫?user_id=ann", other, ""), 404, "not_found")
		wantError(t, e.do(t, "DELETE", "/v1/aliases/user/猫?user_id=ann", other, ""), 404, "not_found")
		wantError(t, e.do(t, "GET", "/v1/memories/"+pet.ID+"/aliases", other, ""), 404, "not_found")
		wantError(t, e.do(t, "PUT", "/v1/aliases/user/x", other, `{"key":"/user/pet","user_id":"ann"}`), 404, "not_found")
		sameSnapshot(t, "memories after refused alias writes", before, e.snapshot(t, key))
		wantError(t, e.do(t, "GET", "/v1/aliases/user/x?user_id=ann", key, ""), 404, "not_found")

		var page struct{ Items []apiAlias }
		r = e.do(t, "GET", "/v1/memories/"+pet.ID+"/aliases", key, "")
		wantStatus(t, r, http.StatusOK)
		mustDecode(t, r, &page)
		if len(page.Items) != 1 || page.Items[0].Alias != "/user/猫" {
			t.Fatalf("aliases of the memory: %+v", page.Items)
		}

		// DELETE through the alias tombstones the target; the alias stays
		// and answers 404 until the key is written again.
		wantStatus(t, e.do(t, "DELETE", "/v1/keys/user/猫?user_id=ann", key, ""), http.StatusOK)
		wantError(t, e.do(t, "GET", "/v1/keys/user/pet?user_id=ann", key, ""), 404, "not_found")
		wantError(t, e.do(t, "GET", "/v1/keys/user/猫?user_id=ann", key, ""), 404, "not_found")
		r = e.do(t, "GET", "/v1/aliases/user/猫?user_id=ann", key, "")
		wantStatus(t, r, http.StatusOK)
		mustDecode(t, r, &a)
		if a.Valid {
			t.Fatalf("the alias of a tombstoned target is not valid: %+v", a)
		}

		r = e.do(t, "DELETE", "/v1/aliases/user/猫?user_id=ann", key, "")
		wantStatus(t, r, http.StatusOK)
		mustDecode(t, r, &a)
		if a.Alias != "/user/猫" || a.MemoryID != pet.ID {
			t.Fatalf("removed: %+v", a)
		}
		wantError(t, e.do(t, "GET", "/v1/aliases/user/猫?user_id=ann", key, ""), 404, "not_found")
	})
}
