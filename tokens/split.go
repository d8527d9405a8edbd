package tokens

import (
	"unicode"
	"unicode/utf8"
)

// runeClass holds the character classes the split patterns test, as
// regexp2 defines them: \s is unicode.IsSpace and \p{X} is the unicode
// package's table X.
type runeClass uint8

const (
	classLetter  runeClass = 1 << iota // \p{L}
	classNumber                        // \p{N}
	classSpace                         // \s
	classNewline                       // \r or \n
	classUpper                         // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], o200k_base only
	classLower                         // [\p{Ll}\p{Lm}\p{Lo}\p{M}], o200k_base only
)

// Classes of the characters that are not letters, numbers or line breaks
// ([^\r\n\p{L}\p{N}], the optional first character of a word) and of
// those that are not space, letters or numbers ([^\s\p{L}\p{N}],
// punctuation and symbols).
const (
	notPrefix = classLetter | classNumber | classNewline
	notSymbol = classLetter | classNumber | classSpace
)

// bmpClasses caches the class of every rune of the Basic Multilingual
// Plane, so that scanning needs no binary search of Unicode tables for
// nearly all text. Filling it from the tables' ranges, rather than rune by
// rune, keeps package initialization well under a millisecond.
var bmpClasses = func() *[0x10000]runeClass {
	t := new([0x10000]runeClass)
	for _, tc := range []struct {
		table *unicode.RangeTable
		class runeClass
	}{
		{unicode.L, classLetter},
		{unicode.Lu, classUpper},
		{unicode.Lt, classUpper},
		{unicode.Lm, classUpper | classLower},
		{unicode.Lo, classUpper | classLower},
		{unicode.Ll, classLower},
		{unicode.M, classUpper | classLower},
		{unicode.N, classNumber},
		{unicode.White_Space, classSpace}, // what unicode.IsSpace tests
	} {
		for _, r := range tc.table.R16 {
			for c := int(r.Lo); c <= int(r.Hi); c += int(r.Stride) {
				t[c] |= tc.class
			}
		}
		for _, r := range tc.table.R32 {
			for c := int(r.Lo); c <= int(r.Hi) && c < len(t); c += int(r.Stride) {
				t[c] |= tc.class
			}
		}
	}
	t['\r'] |= classNewline
	t['\n'] |= classNewline
	return t
}()

// lookupClass computes the class of r, beyond the Basic Multilingual
// Plane, from the Unicode tables.
func lookupClass(r rune) runeClass {
	var c runeClass
	switch {
	case unicode.IsLetter(r):
		c = classLetter
		if unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo) {
			c |= classUpper
		}
		if unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo) {
			c |= classLower
		}
	case unicode.IsMark(r):
		c = classUpper | classLower
	case unicode.IsNumber(r):
		c = classNumber
	case unicode.IsSpace(r):
		c = classSpace
	}
	return c
}

// classAt returns the class and length of the rune at s[i], which must be
// valid UTF-8.
func classAt(s string, i int) (runeClass, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return bmpClasses[b], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r < 0x10000 {
		return bmpClasses[r], n
	}
	return lookupClass(r), n
}

// scanClass returns the end of the run of runes starting at i whose class
// intersects want.
func scanClass(s string, i int, want runeClass) int {
	for i < len(s) {
		c, n := classAt(s, i)
		if c&want == 0 {
			break
		}
		i += n
	}
	return i
}

// scanContraction returns the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) matched
// at s[i:], or 0. Under regexp2's IgnoreCase a rune matches a pattern
// letter when unicode.ToLower maps it to that letter, which for these
// letters only their ASCII capitals do, so folding bit 0x20 suffices.
func scanContraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return 0
	}
	switch s[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return 3
		}
	}
	return 0
}

// splitCL100K returns the end of the piece that starts at p, as matched
// by cl100k_base's pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// trying the alternatives in order. Every rune starts a match of one of
// them, so the pieces tile the text.
func splitCL100K(s string, p int) int {
	if n := scanContraction(s, p); n > 0 {
		return p + n
	}
	c0, n0 := classAt(s, p)
	if c0&classLetter != 0 {
		return scanClass(s, p+n0, classLetter)
	}
	if c0&notPrefix == 0 && p+n0 < len(s) {
		if c1, n1 := classAt(s, p+n0); c1&classLetter != 0 {
			return scanClass(s, p+n0+n1, classLetter)
		}
	}
	if c0&classNumber != 0 {
		return scanDigits(s, p+n0)
	}
	if end := scanSymbols(s, p, c0, false); end > 0 {
		return end
	}
	return scanSpaces(s, p)
}

// splitO200K returns the end of the piece that starts at p, as matched
// by o200k_base's pattern, the alternation of
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	\p{N}{1,3}
//	 ?[^\s\p{L}\p{N}]+[\r\n/]*
//	\s*[\r\n]+
//	\s+(?!\S)
//	\s+
//
// trying the alternatives in order. Marks belong to both word classes and
// to [^\r\n\p{L}\p{N}], so the optional first character is tried before
// being left out, as backtracking does.
func splitO200K(s string, p int) int {
	c0, n0 := classAt(s, p)
	prefixed := c0&notPrefix == 0 && p+n0 < len(s)
	if prefixed {
		if end := scanCasedWord(s, p+n0); end > 0 {
			return end + scanContraction(s, end)
		}
	}
	if end := scanCasedWord(s, p); end > 0 {
		return end + scanContraction(s, end)
	}
	if prefixed {
		if c1, n1 := classAt(s, p+n0); c1&classUpper != 0 {
			end := scanClass(s, scanClass(s, p+n0+n1, classUpper), classLower)
			return end + scanContraction(s, end)
		}
	}
	if c0&classUpper != 0 {
		end := scanClass(s, scanClass(s, p+n0, classUpper), classLower)
		return end + scanContraction(s, end)
	}
	if c0&classNumber != 0 {
		return scanDigits(s, p+n0)
	}
	if end := scanSymbols(s, p, c0, true); end > 0 {
		return end
	}
	return scanSpaces(s, p)
}

// scanCasedWord matches [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+
// at s[i:] and returns its end, or 0. The greedy first run backtracks one
// rune at a time until the second run can start, so the second run starts
// either right after the first (and runs on) or at the first run's last
// rune that is in both classes (and ends there, since what follows it is
// not in the second class).
func scanCasedWord(s string, i int) int {
	lastBoth := 0 // end of the last rune of the first run in both classes
	for i < len(s) {
		c, n := classAt(s, i)
		if c&classUpper == 0 {
			if c&classLower != 0 {
				return scanClass(s, i+n, classLower)
			}
			break
		}
		i += n
		if c&classLower != 0 {
			lastBoth = i
		}
	}
	return lastBoth
}

// scanDigits matches the rest of \p{N}{1,3} after its first rune, which ends
// at i.
func scanDigits(s string, i int) int {
	for k := 1; k < 3 && i < len(s); k++ {
		c, n := classAt(s, i)
		if c&classNumber == 0 {
			break
		}
		i += n
	}
	return i
}

// scanSymbols matches " ?[^\s\p{L}\p{N}]+[\r\n]*" at s[p:], or with slash
// " ?[^\s\p{L}\p{N}]+[\r\n/]*", where c0 is the class of s[p], and
// returns its end, or 0.
func scanSymbols(s string, p int, c0 runeClass, slash bool) int {
	start := p
	if c0&notSymbol != 0 {
		if s[p] != ' ' || p+1 == len(s) {
			return 0
		}
		if c1, _ := classAt(s, p+1); c1&notSymbol != 0 {
			return 0
		}
		start = p + 1
	}
	end := start
	for end < len(s) {
		c, n := classAt(s, end)
		if c&notSymbol != 0 {
			break
		}
		end += n
	}
	for end < len(s) && (s[end] == '\r' || s[end] == '\n' || slash && s[end] == '/') {
		end++
	}
	return end
}

// scanSpaces matches \s*[\r\n]+|\s+(?!\S)|\s+ at s[p:], which starts with a
// space. A run holding a line break ends just after its last one; else a
// run of two or more followed by a non-space leaves its last rune to
// prefix the next word; else the whole run is the piece.
func scanSpaces(s string, p int) int {
	end, last, lastNewline := p, p, -1
	for end < len(s) {
		c, n := classAt(s, end)
		if c&classSpace == 0 {
			break
		}
		if c&classNewline != 0 {
			lastNewline = end
		}
		last = end
		end += n
	}
	switch {
	case lastNewline >= 0:
		return lastNewline + 1
	case end == len(s) || last == p:
		return end
	default:
		return last
	}
}
