package wire

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/engram-memory/engram"
)

// PathKey reads the key that follows prefix (such as "/v1/keys") in a
// URL's escaped path, and checks it with engram.NormalizeKey. An encoded
// slash (%2F) is refused: decoded, it would become a separator, so that
// /v1/keys/a%2Fb and /v1/keys/a/b would name one memory; a key's
// segments are separated by plain slashes only. escaped is the path as
// sent (url.URL.EscapedPath), never the decoded one.
func PathKey(escaped, prefix string, lim engram.KeyLimits) (string, error) {
	rest := strings.TrimPrefix(escaped, prefix)
	if strings.Contains(strings.ToLower(rest), "%2f") {
		return "", engram.Errorf(engram.EINVALID, "key must not contain an encoded slash (%%2F); separate its segments with /")
	}
	key, err := url.PathUnescape(rest)
	if err != nil {
		return "", engram.Errorf(engram.EINVALID, "key has a malformed percent-escape")
	}
	return engram.NormalizeKey(key, lim)
}

// invalidMemoryID matches no memory: it is what MemoryID passes on for an
// id that could not have been issued.
const invalidMemoryID = "mem_invalid"

// MemoryID is the memory id a door passes to the services: id itself, or,
// for one that could not have been issued (NUL, invalid UTF-8), an id
// that matches nothing, so that it gets the same 404 as any unknown id.
func MemoryID(id string) string {
	if strings.ContainsRune(id, 0) || !utf8.ValidString(id) {
		return invalidMemoryID
	}
	return id
}
