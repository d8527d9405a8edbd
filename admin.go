package engram

import (
	"context"
	"slices"
	"sync/atomic"
)

// Clearances, lowest first: a key whose clearance is one of them reads
// the memories whose security_level is that one or lower.
var clearances = []string{SecurityPublic, SecurityInternal, SecurityConfidential, SecuritySecret}

// DefaultClearance is the clearance of a key that was given none.
const DefaultClearance = SecurityInternal

// Withhold modes: what a read through a key does with a memory above its
// clearance (TenantSettings.Withhold).
const (
	WithholdOmit = "omit" // left out, as if it did not exist
	WithholdMask = "mask" // shown with its text replaced by MaskedText
)

// Cleared reports whether a key of clearance may read a memory of level.
// An unknown level counts as secret, an unknown clearance as public.
func Cleared(clearance, level string) bool {
	c := slices.Index(clearances, clearance)
	l := slices.Index(clearances, level)
	if l < 0 {
		l = len(clearances) - 1
	}
	return c >= l
}

// TenantQuotas overrides the configured quotas of one tenant; a nil field
// keeps the configuration's value, 0 is unlimited.
type TenantQuotas struct {
	MaxMemories *int64 `json:"max_memories"`
	MaxBytes    *int64 `json:"max_bytes"`
	MaxSessions *int64 `json:"max_sessions"`
}

// TenantInfo is a tenant as the admin API shows it: its quota overrides,
// what it holds, and how it withholds memories above a key's clearance.
type TenantInfo struct {
	Tenant
	Quotas   TenantQuotas `json:"quotas"`
	Withhold string       `json:"withhold"`
	// Gate is the tenant's memory.gate: "on", "off", or "" for the
	// server's; GateMode its memory.gate_mode: "refuse", "quarantine", or
	// "" for the server's.
	Gate     string      `json:"gate"`
	GateMode string      `json:"gate_mode"`
	Usage    TenantUsage `json:"usage"`
}

// TenantUsage is what a tenant holds (see store/quota.go).
type TenantUsage struct {
	Memories int64 `json:"memories"`
	Bytes    int64 `json:"bytes"`
	Sessions int64 `json:"sessions"`
}

// TenantUpdate changes a tenant's settings; nil fields are left alone.
// A quota set to -1 goes back to the configuration's value.
type TenantUpdate struct {
	Quotas   TenantQuotas
	Withhold *string
	Gate     *string // "on", "off" or "" (the server's)
	GateMode *string // "refuse", "quarantine" or "" (the server's)
}

// Write gate modes (memory.gate_mode): what the gate does with a memory
// that fails a rule.
const (
	GateRefuse     = "refuse"     // 422 naming the rule
	GateQuarantine = "quarantine" // stored quarantined, never recalled until released
)

// KeyUpdate changes a key's read rights; nil fields are left alone.
type KeyUpdate struct {
	Clearance *string
	MaskPII   *bool
}

// AdminService manages tenants and keys for the admin API.
type AdminService interface {
	// FindTenantInfos lists every tenant with its settings and usage.
	FindTenantInfos(ctx context.Context) ([]*TenantInfo, error)
	// FindTenantInfo returns one tenant by name. ENOTFOUND.
	FindTenantInfo(ctx context.Context, name string) (*TenantInfo, error)
	// CreateTenant makes a tenant. EINVALID for a bad name, ECONFLICT when
	// it exists.
	CreateTenant(ctx context.Context, name string) (*TenantInfo, error)
	// UpdateTenant changes a tenant's quotas and withhold mode. ENOTFOUND,
	// EINVALID.
	UpdateTenant(ctx context.Context, name string, u TenantUpdate) (*TenantInfo, error)
	// UpdateAPIKey changes a key's clearance and masker. ENOTFOUND,
	// EINVALID.
	UpdateAPIKey(ctx context.Context, id string, u KeyUpdate) (*APIKey, error)
}

// Reader is who reads through a key: its clearance, whether the masker
// redacts what it reads, and its tenant's withhold mode. A request's
// context carries it (NewContextWithReader) so that every read door applies
// the same rule.
type Reader struct {
	Clearance string
	MaskPII   bool
	Withhold  string
	// Gate and GateMode are the tenant's own write gate settings
	// (TenantInfo.Gate, TenantInfo.GateMode); "" follows the server's.
	Gate     string
	GateMode string
	// withheld counts the memories this request left out or masked.
	withheld *int64
}

type readerKey struct{}

// NewContextWithReader returns ctx carrying r, with a fresh count of
// withheld memories.
func NewContextWithReader(ctx context.Context, r Reader) context.Context {
	r.withheld = new(int64)
	return context.WithValue(ctx, readerKey{}, &r)
}

// ReaderFromContext returns the reader in ctx, or nil when the request
// reads with full rights (the CLI, the server's own jobs).
func ReaderFromContext(ctx context.Context) *Reader {
	r, _ := ctx.Value(readerKey{}).(*Reader)
	return r
}

// Withheld is how many memories the reader in ctx was denied in clear so
// far; 0 without a reader.
func Withheld(ctx context.Context) int {
	if r := ReaderFromContext(ctx); r != nil && r.withheld != nil {
		return int(atomic.LoadInt64(r.withheld))
	}
	return 0
}

// WithReader returns ctx carrying r as it is, sharing its count of
// withheld memories (a reader derived from the request's own).
func WithReader(ctx context.Context, r *Reader) context.Context {
	return context.WithValue(ctx, readerKey{}, r)
}

// CountWithheld counts one memory withheld from r.
func (r *Reader) CountWithheld() {
	if r.withheld != nil {
		atomic.AddInt64(r.withheld, 1)
	}
}
