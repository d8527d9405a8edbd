package engram

import (
	"context"
	"time"
)

// Tenant is an isolated memory space: one product or one end user.
type Tenant struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// APIKey is a tenant's credential. The secret itself is shown once, when
// it is created; only its SHA-256 hash is stored.
type APIKey struct {
	ID         string     `json:"id"`
	TenantID   string     `json:"tenant_id"`
	TenantName string     `json:"tenant"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"` // first characters, to recognise a key
	CreatedAt  time.Time  `json:"created_at"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	// Clearance is the highest memory security_level the key may read
	// (DefaultClearance unless the admin API set another).
	Clearance string `json:"clearance"`
	// MaskPII makes the masker redact secrets and personal data from what
	// the key reads (see internal/clearance).
	MaskPII bool `json:"mask_pii"`
	// Withhold is the key's tenant's withhold mode, filled by
	// Authenticate.
	Withhold string `json:"-"`
	// Gate and GateMode are the key's tenant's write gate settings, filled
	// by Authenticate ("" follows the server's).
	Gate     string `json:"-"`
	GateMode string `json:"-"`
}

// AuthService manages tenants and their API keys.
type AuthService interface {
	// EnsureTenant returns the tenant with name, creating it if needed.
	EnsureTenant(ctx context.Context, name string) (*Tenant, error)
	// CreateAPIKey makes a new key for the tenant and returns it with its
	// secret, which is not stored. ENOTFOUND for an unknown tenant.
	CreateAPIKey(ctx context.Context, tenantName, keyName string) (*APIKey, string, error)
	// ImportAPIKey stores the hash of a key chosen by the operator
	// (ENGRAM_API_KEY); a no-op when it is already stored for the tenant.
	// ECONFLICT when it belongs to another tenant or was revoked.
	ImportAPIKey(ctx context.Context, tenantName, keyName, secret string) (*APIKey, error)
	// FindAPIKeys lists keys, revoked ones included; tenantName "" lists all.
	FindAPIKeys(ctx context.Context, tenantName string) ([]*APIKey, error)
	// RevokeAPIKey revokes a key by id. ENOTFOUND.
	RevokeAPIKey(ctx context.Context, id string) error
	// Authenticate returns the live key matching secret, EUNAUTHORIZED
	// when the secret is unknown or revoked.
	Authenticate(ctx context.Context, secret string) (*APIKey, error)
	// HasActiveKey reports whether the tenant has a key that is not revoked.
	HasActiveKey(ctx context.Context, tenantName string) (bool, error)
}
