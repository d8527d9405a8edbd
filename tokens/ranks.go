package tokens

import "math"

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
