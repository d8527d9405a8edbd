package tokens

import (
	"fmt"
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// This file counts tokens exactly as tiktoken-go's EncodeOrdinary does,
// without producing the tokens: about 10× faster on text never seen
// before and 40-50× on recounted text (BenchmarkCount against
// BenchmarkCountTiktokenGo). tiktoken-go splits text with a backtracking
// regexp2 pattern and then merges byte pairs in quadratic time; here the
// two patterns are hand-compiled into scanners that reproduce regexp2's
// choice of every piece, merging is O(n log n) over compact rank tables,
// and the counts of multi-token pieces are cached.

// rankFiles maps the supported encodings to the rank tables compiled into
// tiktoken-go-loader, which keys its assets by the base name of the URL
// tiktoken-go would download them from.
var rankFiles = map[string]string{
	"cl100k_base": "cl100k_base.tiktoken",
	"o200k_base":  "o200k_base.tiktoken",
}

// A rank table is tens of megabytes and takes a while to parse, so every
// Tokenizer of an encoding shares one counter.
var (
	tokenCountersMu sync.Mutex
	tokenCounters   = map[string]*fastCounter{}
)

// fastCounter counts the tokens of one encoding. It is safe for
// concurrent use: only its cache changes after construction.
type fastCounter struct {
	ranks *rankTable
	// split returns the end of the piece that starts at p in s.
	split func(s string, p int) int
	// merged caches the counts of pieces that are not a single token.
	merged pieceCache
}

// pieceCache remembers the token counts of pieces that are not a single
// token. Merging costs about 25 ns a byte, and the same memories are
// rendered into context after context (and counted line by line before
// the whole context is), so their multi-token pieces, mostly CJK runs
// between punctuation, recur; a hit costs a hash of the piece instead.
//
// It is direct-mapped: a piece hashes to one slot and replaces whatever
// was there, which bounds its size without any eviction bookkeeping and
// keeps both lookups and stores lock-free.
type pieceCache struct {
	seed  maphash.Seed
	slots [pieceCacheSlots]atomic.Pointer[cachedPiece]
}

// cachedPiece is a piece and its token count.
type cachedPiece struct {
	piece  string
	tokens int
}

// The cache holds at most pieceCacheSlots pieces of at most pieceCacheLen
// bytes, a few megabytes at worst.
const (
	pieceCacheSlots = 1 << 14
	pieceCacheLen   = 256
)

// slot returns the slot piece maps to.
func (pc *pieceCache) slot(piece string) *atomic.Pointer[cachedPiece] {
	return &pc.slots[maphash.String(pc.seed, piece)&(pieceCacheSlots-1)]
}

// newFastCounter returns a counter with an empty cache.
func newFastCounter(ranks *rankTable, split func(string, int) int) *fastCounter {
	c := &fastCounter{ranks: ranks, split: split}
	c.merged.seed = maphash.MakeSeed()
	return c
}

// counterFor returns the shared counter of encoding, loading its ranks on
// first use.
func counterFor(encoding string) (*fastCounter, error) {
	tokenCountersMu.Lock()
	defer tokenCountersMu.Unlock()
	if c, ok := tokenCounters[encoding]; ok {
		return c, nil
	}
	file, ok := rankFiles[encoding]
	if !ok {
		return nil, fmt.Errorf("unknown encoding (want cl100k_base or o200k_base)")
	}
	ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe(file)
	if err != nil {
		return nil, err
	}
	c := newFastCounter(newRankTable(ranks), splitCL100K)
	if encoding == "o200k_base" {
		c.split = splitO200K
	}
	tokenCounters[encoding] = c
	return c, nil
}

// count returns the number of tokens tiktoken-go's EncodeOrdinary would
// return for text.
func (c *fastCounter) count(text string) int {
	if !utf8.ValidString(text) {
		// tiktoken-go matches its pattern against []rune(text), which turns
		// every invalid byte into U+FFFD, and encodes the pieces cut from
		// those runes; converting the same way keeps counts identical.
		text = string([]rune(text))
	}
	n := 0
	for p := 0; p < len(text); {
		end := c.split(text, p)
		n += c.pieceTokens(text[p:end])
		p = end
	}
	return n
}

// pieceTokens returns the number of tokens byte-pair encoding gives piece.
func (c *fastCounter) pieceTokens(piece string) int {
	if len(piece) == 1 {
		return 1
	}
	if c.ranks.rank(piece) != noRank {
		return 1
	}
	if len(piece) > pieceCacheLen {
		return c.merge(piece)
	}
	slot := c.merged.slot(piece)
	if e := slot.Load(); e != nil && e.piece == piece {
		return e.tokens
	}
	n := c.merge(piece)
	// Clone so that the cache does not pin the text the piece points into.
	slot.Store(&cachedPiece{strings.Clone(piece), n})
	return n
}

// noRank marks a byte string that is not a token and so never merges.
const noRank = math.MaxInt

// rankTable maps every token's bytes to its rank, which is also its merge
// priority: lower ranks merge first. Counting looks up about four byte
// strings per token, most of them short and more than half of them not
// tokens, and the tables are megabytes, so lookups are arranged to avoid
// cache misses and Go's string hashing:
//   - two-byte strings index an array of all 65,536 of them;
//   - other strings first test a 256 KiB bit set of token hashes, small
//     enough to stay in cache, which turns away nine in ten non-tokens;
//   - strings of up to seven bytes, packed with their length into a
//     uint64, then probe an open-addressing table, and longer ones a map.
type rankTable struct {
	pairs []int32        // rank of each two-byte string, or -1
	known []uint64       // bit set of the hashes of tokens not in pairs
	slots []rankSlot     // tokens of up to maxPacked bytes
	shift uint           // 64 minus log2(len(slots)), for the slot hash
	long  map[string]int // longer tokens
}

// rankSlot holds a token's packed bytes (0 when empty) and rank.
type rankSlot struct {
	key  uint64
	rank int
}

// maxPacked is the longest token a uint64 key holds alongside its length.
const maxPacked = 7

// knownBits is log2 of the size of the bit set in bits: 2 Mi bits for at
// most 200,000 tokens leaves nine in ten bits clear.
const knownBits = 21

// Multipliers for Fibonacci-style hashing: odd, with well-mixed bits, so
// that the top bits of a product depend on all bits of the key.
const (
	mix1 = 0x9E3779B97F4A7C15
	mix2 = 0xC2B2AE3D27D4EB4F
)

func newRankTable(ranks map[string]int) *rankTable {
	t := &rankTable{
		pairs: make([]int32, 1<<16),
		known: make([]uint64, 1<<knownBits/64),
		long:  map[string]int{},
	}
	for i := range t.pairs {
		t.pairs[i] = -1
	}
	packed := 0
	for b := range ranks {
		if len(b) <= maxPacked {
			packed++
		}
	}
	// A load factor of at most 0.6 keeps probe sequences short.
	bits := uint(1)
	for 1<<bits*3 < 5*packed {
		bits++
	}
	t.slots = make([]rankSlot, 1<<bits)
	t.shift = 64 - bits
	for b, r := range ranks {
		switch {
		case len(b) == 2:
			t.pairs[uint16(b[0])|uint16(b[1])<<8] = int32(r)
		case len(b) <= maxPacked:
			key := packKey(b)
			h := knownBit(key)
			t.known[h/64] |= 1 << (h % 64)
			i := t.slot(key)
			for t.slots[i].key != 0 {
				i = (i + 1) & (len(t.slots) - 1)
			}
			t.slots[i] = rankSlot{key, r}
		default:
			h := knownLongBit(b)
			t.known[h/64] |= 1 << (h % 64)
			t.long[b] = r
		}
	}
	return t
}

// packKey packs b, of 1 to maxPacked bytes, little-endian into the low
// bytes of a uint64 and its length into the top byte, which keeps keys
// of different lengths apart even when b ends in zero bytes.
func packKey(b string) uint64 {
	n := len(b)
	var k uint64
	if n >= 4 {
		// Two overlapping four-byte loads cover five to seven bytes.
		lo := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24
		hi := uint64(b[n-4]) | uint64(b[n-3])<<8 | uint64(b[n-2])<<16 | uint64(b[n-1])<<24
		k = lo | hi<<(8*(n-4))
	} else {
		for i := range n {
			k |= uint64(b[i]) << (8 * i)
		}
	}
	return k | uint64(n)<<56
}

// load64 returns the eight bytes of b at i, little-endian.
func load64(b string, i int) uint64 {
	b = b[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// knownBit returns the bit of the known set that stands for the packed
// key of a string of up to maxPacked bytes.
func knownBit(key uint64) uint64 {
	return key * mix1 >> (64 - knownBits)
}

// knownLongBit returns the bit of the known set that stands for b, of
// more than maxPacked bytes, hashing its length and its first and last
// eight bytes.
func knownLongBit(b string) uint64 {
	k := (load64(b, 0)*mix1 ^ load64(b, len(b)-8) ^ uint64(len(b))) * mix2
	return k >> (64 - knownBits)
}

// isKnown reports whether bit h of the known set is set.
func (t *rankTable) isKnown(h uint64) bool {
	return t.known[h/64]&(1<<(h%64)) != 0
}

// slot returns the home slot of a packed key.
func (t *rankTable) slot(key uint64) int {
	return int(key * mix1 >> t.shift)
}

// rank returns the rank of b, or noRank if b is not a token.
func (t *rankTable) rank(b string) int {
	switch {
	case len(b) == 2:
		if r := t.pairs[uint16(b[0])|uint16(b[1])<<8]; r >= 0 {
			return int(r)
		}
	case len(b) <= maxPacked:
		key := packKey(b)
		if !t.isKnown(knownBit(key)) {
			return noRank
		}
		for i := t.slot(key); t.slots[i].key != 0; i = (i + 1) & (len(t.slots) - 1) {
			if t.slots[i].key == key {
				return t.slots[i].rank
			}
		}
	case t.isKnown(knownLongBit(b)):
		if r, ok := t.long[b]; ok {
			return r
		}
	}
	return noRank
}

// mergeScratch is the working memory of merge, pooled so that counting
// allocates nothing once warm.
type mergeScratch struct {
	next, prev, rank []int32
	heap             []uint64
}

var mergeScratchPool = sync.Pool{New: func() any { return new(mergeScratch) }}

// merge runs tiktoken's byte-pair merge on piece and returns the number of
// parts left: starting from single bytes it repeatedly joins the leftmost
// adjacent pair whose joined bytes have the lowest rank, until no adjacent
// pair is a token.
//
// tiktoken-go finds that pair by scanning all parts after every join,
// which is quadratic; here the parts form a linked list and candidate
// pairs wait in a min-heap keyed rank<<32|position, so that the smallest
// key is the same leftmost lowest-ranked pair, in O(n log n) (several
// times faster already for a dozen bytes). An entry goes stale when its
// part is joined into its predecessor or its pair grows; a grown pair is
// a longer byte string and so has a different rank, so comparing ranks
// detects both. Positions are int32, which holds pieces, runs of one
// character class, of up to 2 GiB.
func (c *fastCounter) merge(piece string) int {
	n := len(piece)
	s := mergeScratchPool.Get().(*mergeScratch)
	defer mergeScratchPool.Put(s)
	// Part i starts at byte i; prev[0] and next[n-1] == n are sentinels,
	// and rank[i] is the rank of part i joined with its successor, or -1.
	s.next, s.prev, s.rank = resize(s.next, n+1), resize(s.prev, n+1), resize(s.rank, n+1)
	next, prev, rank := s.next, s.prev, s.rank
	h := s.heap[:0]
	for i := range n + 1 {
		next[i], prev[i], rank[i] = int32(i+1), int32(i-1), -1
	}
	for i := 0; i+1 < n; i++ {
		if r := c.ranks.rank(piece[i : i+2]); r != noRank {
			rank[i] = int32(r)
			h = append(h, uint64(r)<<32|uint64(i))
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		heapDown(h, i)
	}
	// pairRank returns the rank of part i joined with its successor, or -1.
	pairRank := func(i int32) int32 {
		if j := next[i]; int(j) < n {
			if r := c.ranks.rank(piece[i:next[j]]); r != noRank {
				return int32(r)
			}
		}
		return -1
	}
	parts := n
	for len(h) > 0 {
		top := h[0]
		h[0] = h[len(h)-1]
		h = h[:len(h)-1]
		heapDown(h, 0)
		i := int32(uint32(top))
		if rank[i] != int32(top>>32) {
			continue
		}
		j := next[i]
		rank[j] = -1
		next[i] = next[j]
		prev[next[j]] = i
		parts--
		for _, k := range [2]int32{i, prev[i]} {
			if k < 0 {
				continue
			}
			if rank[k] = pairRank(k); rank[k] >= 0 {
				h = heapPush(h, uint64(rank[k])<<32|uint64(k))
			}
		}
	}
	s.heap = h
	return parts
}

// resize returns b with length n, reusing its array when large enough.
func resize(b []int32, n int) []int32 {
	if cap(b) < n {
		return make([]int32, n)
	}
	return b[:n]
}

// heapPush adds e to the binary min-heap h.
func heapPush(h []uint64, e uint64) []uint64 {
	h = append(h, e)
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if h[parent] <= h[i] {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
	return h
}

// heapDown restores the heap order of h below i.
func heapDown(h []uint64, i int) {
	for {
		child := 2*i + 1
		if child >= len(h) {
			return
		}
		if r := child + 1; r < len(h) && h[r] < h[child] {
			child = r
		}
		if h[i] <= h[child] {
			return
		}
		h[i], h[child] = h[child], h[i]
		i = child
	}
}

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
