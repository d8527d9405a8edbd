package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxSegment is the longest encoded segment kept as it is. A longer one
// is cut and ends in "~" and a hash of the whole segment, so that every
// file name, with ".json" and the temporary-file affixes, stays within the
// 255 bytes file systems allow.
const maxSegment = 200

// errBadKey is returned for a key the store would never accept: the
// mirror refuses rather than rewrites it, like NormalizeKey.
var errBadKey = errors.New("journal: key must be \"/\" and non-empty segments other than . and ..")

// KeyPath returns where the index file of key lives, relative to a
// tenant's mirror: "index/user/calendar/dentist.json" for
// "/user/calendar/dentist". Each segment is encoded by encodeSegment; a
// directory segment that would end in ".json" has that dot encoded too, so
// the file of "/a/x" (x.json) and the directory of "/a/x.json/y"
// (x%2Ejson/) never meet. The mapping is one to one and every path it
// returns stays below index/.
func KeyPath(key string) (string, error) {
	if !strings.HasPrefix(key, "/") {
		return "", errBadKey
	}
	segs := strings.Split(key[1:], "/")
	var b strings.Builder
	b.WriteString("index")
	for i, seg := range segs {
		if seg == "" || seg == "." || seg == ".." {
			return "", errBadKey
		}
		enc := encodeSegment(seg)
		b.WriteByte('/')
		if i == len(segs)-1 {
			b.WriteString(enc)
			b.WriteString(".json")
			continue
		}
		if strings.HasSuffix(enc, ".json") {
			enc = enc[:len(enc)-5] + "%2Ejson"
		}
		b.WriteString(enc)
	}
	return b.String(), nil
}

// memoryPath is where a live memory without a key is mirrored:
// memories/<category>/<id>.json, outside index/, so it can never meet a key.
func memoryPath(category, id string) string {
	return "memories/" + encodeSegment(category) + "/" + encodeSegment(id) + ".json"
}

// encodeSegment percent-encodes (as %XX, upper-case hex, per byte) what a
// file name cannot hold or what would hide or confuse it: "/" and "\",
// control characters, invalid UTF-8, the characters Windows and macOS
// refuse (: * ? " < > |), "%" itself and "~" (which marks a shortened
// name), and a leading "." (no hidden files, no "." or ".."). Letters of
// every script stay as they are, so `ls index/user/calendar/` reads
// 牙科复诊.json. A result longer than maxSegment bytes is cut at a
// character boundary and ends in "~" and 16 hex digits of the segment's
// SHA-256.
func encodeSegment(seg string) string {
	var b strings.Builder
	cut := -1 // where the name is cut if it is too long
	for i := 0; i < len(seg); {
		r, size := utf8.DecodeRuneInString(seg[i:])
		if b.Len() <= maxSegment {
			cut = b.Len()
		}
		if escapeRune(r, size, i == 0) {
			for _, c := range []byte(seg[i : i+size]) {
				b.WriteByte('%')
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&15])
			}
		} else {
			b.WriteString(seg[i : i+size])
		}
		i += size
	}
	if b.Len() <= maxSegment {
		return b.String()
	}
	sum := sha256.Sum256([]byte(seg))
	return b.String()[:cut] + "~" + hex.EncodeToString(sum[:8])
}

const hexDigits = "0123456789ABCDEF"

// escapeRune reports whether the rune r (size bytes, first in its
// segment or not) is percent-encoded.
func escapeRune(r rune, size int, first bool) bool {
	switch {
	case r == utf8.RuneError && size == 1: // invalid UTF-8
		return true
	case unicode.IsControl(r):
		return true
	case r == '.':
		return first
	}
	return strings.ContainsRune(`%/\:*?"<>|~`, r)
}
