// Package engram holds the domain of the engram agent-memory service: the
// memory types of the three layers, the service interfaces that adapters
// implement, and the single error type that every layer returns.
//
// It imports the standard library only. Storage lives in store/, HTTP in
// server/, and cmd/engram wires them together.
package engram

import (
	"context"
	"time"
)

// Clock returns the current time. Services take one so that tests can fix
// the time; production code passes time.Now.
type Clock func() time.Time

// TokenCounter counts tokens the way the model that reads the context will.
type TokenCounter interface {
	// Count returns the number of tokens in text.
	Count(text string) int
	// Encoding names the tokenizer, e.g. "cl100k_base".
	Encoding() string
}

type tenantKey struct{}

// NewContextWithTenant returns ctx carrying the tenant an authenticated
// request acts for. Every store query reads the tenant from here.
func NewContextWithTenant(ctx context.Context, tenantID string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenantID)
}

// TenantFromContext returns the tenant set by NewContextWithTenant, or "".
func TenantFromContext(ctx context.Context) string {
	id, _ := ctx.Value(tenantKey{}).(string)
	return id
}

type actorKey struct{}

// Actor says who made a change: the API key id (never the key itself) and
// the request id, recorded on every memory event.
type Actor struct {
	KeyID     string `json:"key_id,omitempty"`
	RequestID string `json:"request_id,omitempty"`
}

// NewContextWithActor returns ctx carrying the actor of a request.
func NewContextWithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFromContext returns the actor set by NewContextWithActor.
func ActorFromContext(ctx context.Context) Actor {
	a, _ := ctx.Value(actorKey{}).(Actor)
	return a
}

// ValidName reports whether s is a usable category or tenant name:
// 1–64 lower-case ASCII letters, digits, '-' or '_', starting with a letter.
func ValidName(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
