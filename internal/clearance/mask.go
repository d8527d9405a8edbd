package clearance

import (
	"regexp"
	"strings"
)

// The masker's patterns, most specific first. They catch the obvious:
// e-mail addresses, card numbers (13–19 digits passing the Luhn check),
// phone numbers (10–15 digits with the usual separators, or 8 and more
// after a leading +; so dates and short numbers pass),
// and API-key-like tokens (known prefixes, or 32+ characters of letters
// and digits mixed). Anything subtler (names, addresses) passes.
var (
	emailRe  = regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}`)
	tokenRe  = regexp.MustCompile(`\b(sk-[A-Za-z0-9_\-]{16,}|egk_[A-Za-z0-9_\-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abprs]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{30,})\b`)
	longRe   = regexp.MustCompile(`\b[A-Za-z0-9_\-]{32,}\b`)
	digitsRe = regexp.MustCompile(`\+?\d[\d \-.()]{6,}\d`)
)

// Redact replaces the secrets and personal data the masker recognises in
// s with [email], [card], [phone] and [secret].
func Redact(s string) string {
	if s == "" {
		return s
	}
	s = tokenRe.ReplaceAllString(s, "[secret]")
	s = emailRe.ReplaceAllString(s, "[email]")
	s = longRe.ReplaceAllStringFunc(s, func(t string) string {
		if strings.ContainsAny(t, "0123456789") && strings.IndexFunc(t, isLetter) >= 0 {
			return "[secret]"
		}
		return t
	})
	return digitsRe.ReplaceAllStringFunc(s, func(t string) string {
		var d []byte
		for i := 0; i < len(t); i++ {
			if t[i] >= '0' && t[i] <= '9' {
				d = append(d, t[i])
			}
		}
		switch {
		case len(d) >= 13 && len(d) <= 19 && luhn(d):
			return "[card]"
		case len(d) <= 15 && (t[0] == '+' && len(d) >= 8 || len(d) >= 10):
			return "[phone]"
		}
		return t
	})
}

func isLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

// luhn reports whether the digits pass the Luhn checksum of card numbers.
func luhn(d []byte) bool {
	sum := 0
	for i := range d {
		n := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			if n *= 2; n > 9 {
				n -= 9
			}
		}
		sum += n
	}
	return sum%10 == 0
}
