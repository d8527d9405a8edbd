package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/engram-memory/engram/store/storetest"
)

// TestClearanceQueryExpansion: a memory above a key's clearance does not
// steer the key's recall. The query expansion of lexical search (pseudo-
// relevance feedback) reads the words of the best first matches; a
// confidential "The wifi password is tangerine" must not lend "tangerine"
// to an internal key's "wifi password", which would surface the public
// memory about tangerine smoothies and so tell the key the confidential
// memory's words — neither when the tenant omits what a key may not read
// nor when it masks it. A secret key's recall, which may read the
// confidential memory, is still expanded by it.
func TestClearanceQueryExpansion(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		m, secret, internal, _ := acmeKeys(t, engine)
		write := func(body string) string { return writeAs(t, m, secret, body) }
		withhold := func(mode string) {
			if s, _, b := call(t, m, "PATCH", "/v1/admin/tenants/acme", testAdminKey, "application/json", `{"withhold":"`+mode+`"}`); s != http.StatusOK {
				t.Fatalf("withhold=%s: %d %s", mode, s, b)
			}
		}
		const q = `{"query":"wifi password","token_budget":500}`
		recall := func(key string) string {
			s, _, b := call(t, m, "POST", "/v1/recall", key, "application/json", q)
			if s != http.StatusOK {
				t.Fatalf("recall: %d %s", s, b)
			}
			return b
		}
		for _, f := range []string{"Lunch is served at noon in the cafeteria", "The parking garage opens at seven",
			"Printer paper is stored in room 12", "The quarterly review happens in March", "Bikes go in the basement rack",
			"The fire drill is on the first Monday", "Visitors sign in at reception", "The gym closes at ten",
			"Mail arrives every morning around nine", "The library has a quiet room", "Coffee beans come from Brazil",
			"The elevator is serviced on Sundays", "Badges are renewed yearly", "The roof garden has tomatoes",
			"Standup starts at half past nine", "Holidays follow the regional calendar", "The shuttle leaves hourly",
			"Desk booking uses the app", "The server room is kept cold", "Recycling bins are blue"} {
			write(`{"content":"` + f + `","category":"work","security_level":"public"}`)
		}
		write(`{"content":"Tangerine smoothies are sold in the kiosk on Fridays","category":"work","security_level":"public"}`)
		conf := write(`{"content":"The wifi password is tangerine","category":"work","security_level":"confidential"}`)

		if b := recall(secret); !strings.Contains(b, "smoothies") {
			t.Errorf("a secret key's recall is not expanded by the confidential memory it may read: %s", b)
		}
		for _, mode := range []string{"omit", "mask"} {
			withhold(mode)
			if b := recall(internal); strings.Contains(b, "smoothies") || strings.Contains(b, "tangerine") {
				t.Errorf("withhold=%s: the confidential memory's words steer an internal key's recall: %s", mode, b)
			}
		}
		if s, _, b := call(t, m, "DELETE", "/v1/memories/"+conf, secret, "", ""); s != http.StatusOK {
			t.Fatalf("delete: %d %s", s, b)
		}
		if b := recall(internal); strings.Contains(b, "smoothies") {
			t.Errorf("without the confidential memory, recall still finds the smoothies: %s", b)
		}
	})
}
