package clearance_test

import (
	"testing"

	"github.com/engram-memory/engram/internal/clearance"
)

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"write to maya.ruiz@example.com today":           "write to [email] today",
		"card 4111 1111 1111 1111 expires 09/28":         "card [card] expires 09/28",
		"call +1 (415) 555-0100 after six":               "call [phone] after six",
		"她的手机号是13812345678":                              "她的手机号是[phone]",
		"key sk-proj-abcdefghijklmnop1234 in the vault":  "key [secret] in the vault",
		"token 9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddcc": "token [secret]",
		"meeting on 2026-11-26 at 10:30, room 4":         "meeting on 2026-11-26 at 10:30, room 4",
		"order 1234 5678 (not a card, too short)":        "order 1234 5678 (not a card, too short)",
		"reach me at 415.555.0100":                       "reach me at [phone]",
		"we sold 12 units":                               "we sold 12 units",
		"":                                               "",
	} {
		if got := clearance.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
