// Package analysis turns Chinese and English text into the index terms that
// the lexical index stores and the router counts.
//
// English (and other alphabetic scripts) is split on anything that is not a
// letter or digit, lower-cased, folded to base letters (café → cafe), stripped of common stop words and stemmed
// with the Snowball English stemmer, so "painting" matches "paints". Chinese
// and Japanese have no spaces, so each run of Han or kana characters becomes
// its overlapping character bigrams ("我喜欢咖啡" → 我喜 喜欢 欢咖 咖啡), and a
// lone character stays a unigram. A two-character word such as 咖啡 or 牙科 is
// then one bigram, found wherever it occurs. The same function serves
// documents and queries, so both sides always agree, and its output contains
// letters and digits only: it can be quoted into FTS5 or tsquery syntax
// without escaping surprises.
package analysis

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

// MaxTermRunes caps a term's length; longer words are cut.
const MaxTermRunes = 40

// Terms returns the index terms of text in order, duplicates kept.
func Terms(text string) []string {
	var out []string
	var word []rune
	var cjk []rune
	flushWord := func() {
		if len(word) > 0 {
			if t := wordTerm(word); t != "" {
				out = append(out, t)
			}
			word = word[:0]
		}
	}
	flushCJK := func() {
		switch len(cjk) {
		case 0:
		case 1:
			out = append(out, string(cjk))
		default:
			for i := 0; i+1 < len(cjk); i++ {
				out = append(out, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for _, r := range text {
		if r < utf8.RuneSelf { // ASCII: no unicode tables
			switch {
			case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
				flushCJK()
				word = append(word, r)
			case 'A' <= r && r <= 'Z':
				flushCJK()
				word = append(word, r+'a'-'A')
			default:
				flushWord()
				flushCJK()
			}
			continue
		}
		switch {
		case isCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			flushCJK()
			word = append(word, unicode.ToLower(r))
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return out
}

// UniqueTerms returns the distinct terms of text in first-seen order.
func UniqueTerms(text string) []string {
	terms := Terms(text)
	seen := make(map[string]struct{}, len(terms))
	out := terms[:0]
	for _, t := range terms {
		if _, ok := seen[t]; ok {
			continue
		}
		seen[t] = struct{}{}
		out = append(out, t)
	}
	return out
}

// Overlap counts the terms two lists of distinct terms (UniqueTerms)
// share and the terms only one of them holds: the parts of their Jaccard
// similarity, shared / (shared + onlyA + onlyB).
func Overlap(a, b []string) (shared, onlyA, onlyB int) {
	inB := make(map[string]bool, len(b))
	for _, t := range b {
		inB[t] = true
	}
	for _, t := range a {
		if inB[t] {
			shared++
		} else {
			onlyA++
		}
	}
	return shared, onlyA, len(b) - shared
}

// Join returns the terms of text joined by single spaces: the form stored
// in the index columns.
func Join(text string) string {
	return strings.Join(Terms(text), " ")
}

func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}

func wordTerm(word []rune) string {
	if len(word) > MaxTermRunes {
		word = word[:MaxTermRunes]
	}
	w := string(word)
	if len(word) == 1 && !unicode.IsDigit(word[0]) {
		return "" // "s" of "Caroline's", "a", "i": no signal
	}
	if _, stop := stopWords[w]; stop {
		return ""
	}
	if isASCIILetters(w) {
		return stem(w)
	}
	folded := strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, norm.NFD.String(w))
	if isASCIILetters(folded) {
		return stem(folded)
	}
	return norm.NFC.String(folded)
}

// stems remembers the stems of the words seen last: the Snowball stemmer
// took a third of the CPU of analysing a memory, and words repeat (a
// corpus's common words, a tenant's vocabulary). Emptied when full, so
// it stays under stemCacheSize entries.
var stems = struct {
	sync.RWMutex
	m map[string]string
}{m: map[string]string{}}

const stemCacheSize = 1 << 16

// stem returns the Snowball English stem of a word of ASCII letters.
func stem(w string) string {
	stems.RLock()
	s, ok := stems.m[w]
	stems.RUnlock()
	if ok {
		return s
	}
	s = english.Stem(w, false)
	stems.Lock()
	if len(stems.m) >= stemCacheSize {
		clear(stems.m)
	}
	stems.m[strings.Clone(w)] = s
	stems.Unlock()
	return s
}

func isASCIILetters(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// stopWords are English function words that match almost every memory and
// so only slow the search down. Question words (when, why, how) are kept:
// the router reads them, and BM25 weighs them down anyway.
var stopWords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`a an the and or but if then else of to in on at by for with from into onto
		about as is are was were be been being am do does did doing done have has had having
		i me my mine myself we us our ours you your yours he him his she her hers it its they them their theirs
		this that these those there here what which who whom whose
		not no nor so too very can could would should will shall may might must
		just than also only own same such both each few more most other some any all
		up down out off over under again further once
		s t don didn doesn isn aren wasn weren won wouldn shouldn couldn ll re ve d m o y`) {
		m[w] = struct{}{}
	}
	return m
}()

// questionWords say what form of answer a question wants, not what it is
// about; the router reads them, retrieval does not. The Chinese entries
// are the bigrams of 什么, 为什么, 怎么, 哪里, 哪个, 多少 and 什么时候.
var questionWords = map[string]struct{}{
	"when": {}, "where": {}, "why": {}, "how": {},
	"什么": {}, "为什": {}, "怎么": {}, "哪里": {}, "哪个": {}, "多少": {}, "么时": {}, "时候": {},
}

// QueryTerms returns the distinct terms of a query for retrieval: its
// UniqueTerms less question words, unless nothing else is left.
func QueryTerms(text string) []string {
	all := UniqueTerms(text)
	out := make([]string, 0, len(all))
	for _, t := range all {
		if _, q := questionWords[t]; !q {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return all
	}
	return out
}
