// Package peer carries what the HTTP server learned about a request's
// client to the handlers mounted below it that are not gin handlers (the
// console): the client's address and whether the request reached engram
// over TLS. The server decides both, believing X-Forwarded-For and
// X-Forwarded-Proto only from server.trusted_proxies; a handler served
// without it falls back to the TCP peer and the connection itself.
package peer

import (
	"context"
	"net"
	"net/http"
)

// Info is what the server learned about a request's client.
type Info struct {
	// Addr is the client's IP address.
	Addr string
	// TLS reports that the client's connection was encrypted: TLS ended
	// at engram, or a trusted proxy said https.
	TLS bool
}

type infoKey struct{}

// NewContext returns ctx carrying info.
func NewContext(ctx context.Context, info Info) context.Context {
	return context.WithValue(ctx, infoKey{}, info)
}

// FromRequest returns the Info the server put in r's context, else the
// TCP peer's address and whether r itself came over TLS.
func FromRequest(r *http.Request) Info {
	if info, ok := r.Context().Value(infoKey{}).(Info); ok {
		return info
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return Info{Addr: host, TLS: r.TLS != nil}
}
