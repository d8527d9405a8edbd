package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

var _ engram.AdminService = (*DB)(nil)

// tenantInfoRow is a tenant with its settings and usage.
type tenantInfoRow struct {
	ID          string
	Name        string
	CreatedAt   time.Time
	MaxMemories *int64
	MaxBytes    *int64
	MaxSessions *int64
	Withhold    string
	Gate        string
	GateMode    string
	Memories    int64
	Bytes       int64
	Sessions    int64
}

const tenantInfoSQL = `SELECT t.id, t.name, t.created_at, t.max_memories, t.max_bytes, t.max_sessions, t.withhold, t.gate, t.gate_mode,
	COALESCE(u.memories, 0) AS memories, COALESCE(u.bytes, 0) AS bytes, COALESCE(u.sessions, 0) AS sessions
	FROM tenants t LEFT JOIN tenant_usage u ON u.tenant_id = t.id`

func (r *tenantInfoRow) toInfo() *engram.TenantInfo {
	return &engram.TenantInfo{
		Tenant:   engram.Tenant{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt.UTC()},
		Quotas:   engram.TenantQuotas{MaxMemories: r.MaxMemories, MaxBytes: r.MaxBytes, MaxSessions: r.MaxSessions},
		Withhold: r.Withhold,
		Gate:     r.Gate,
		GateMode: r.GateMode,
		Usage:    engram.TenantUsage{Memories: r.Memories, Bytes: r.Bytes, Sessions: r.Sessions},
	}
}

// FindTenantInfos implements engram.AdminService.
func (db *DB) FindTenantInfos(ctx context.Context) ([]*engram.TenantInfo, error) {
	var rows []tenantInfoRow
	if err := db.r.WithContext(ctx).Raw(tenantInfoSQL + ` ORDER BY t.name`).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list tenants: %w", err)
	}
	out := make([]*engram.TenantInfo, len(rows))
	for i := range rows {
		out[i] = rows[i].toInfo()
	}
	return out, nil
}

// FindTenantInfo implements engram.AdminService.
func (db *DB) FindTenantInfo(ctx context.Context, name string) (*engram.TenantInfo, error) {
	return db.tenantInfo(db.r.WithContext(ctx), name)
}

func (db *DB) tenantInfo(g *gorm.DB, name string) (*engram.TenantInfo, error) {
	var rows []tenantInfoRow
	if err := g.Raw(tenantInfoSQL+` WHERE t.name = ?`, name).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: find tenant: %w", err)
	}
	if len(rows) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "tenant %q not found", name)
	}
	return rows[0].toInfo(), nil
}

// CreateTenant implements engram.AdminService.
func (db *DB) CreateTenant(ctx context.Context, name string) (*engram.TenantInfo, error) {
	if !engram.ValidName(name) {
		return nil, engram.Errorf(engram.EINVALID, "tenant name %q: want 1-64 lower-case letters, digits, '-' or '_'", name)
	}
	g := db.w.WithContext(ctx)
	res := g.Exec(`INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`,
		newID("ten"), name, db.now().UTC())
	if res.Error != nil {
		return nil, fmt.Errorf("store: create tenant: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, engram.Errorf(engram.ECONFLICT, "tenant %q exists", name)
	}
	return db.tenantInfo(g, name)
}

// UpdateTenant implements engram.AdminService.
func (db *DB) UpdateTenant(ctx context.Context, name string, u engram.TenantUpdate) (*engram.TenantInfo, error) {
	set := map[string]any{}
	for col, v := range map[string]*int64{"max_memories": u.Quotas.MaxMemories, "max_bytes": u.Quotas.MaxBytes,
		"max_sessions": u.Quotas.MaxSessions} {
		switch {
		case v == nil:
		case *v == -1:
			set[col] = nil
		case *v < 0:
			return nil, engram.Errorf(engram.EINVALID, "quotas.%s must be 0 (unlimited), a positive limit or -1 (the configured value)", col)
		default:
			set[col] = *v
		}
	}
	if u.Withhold != nil {
		if *u.Withhold != engram.WithholdOmit && *u.Withhold != engram.WithholdMask {
			return nil, engram.Errorf(engram.EINVALID, "withhold must be %q or %q", engram.WithholdOmit, engram.WithholdMask)
		}
		set["withhold"] = *u.Withhold
	}
	if u.Gate != nil {
		if *u.Gate != "on" && *u.Gate != "off" && *u.Gate != "" {
			return nil, engram.Errorf(engram.EINVALID, `gate must be "on", "off" or "" (the server's memory.gate)`)
		}
		set["gate"] = *u.Gate
	}
	if u.GateMode != nil {
		if *u.GateMode != engram.GateRefuse && *u.GateMode != engram.GateQuarantine && *u.GateMode != "" {
			return nil, engram.Errorf(engram.EINVALID, `gate_mode must be %q, %q or "" (the server's memory.gate_mode)`, engram.GateRefuse, engram.GateQuarantine)
		}
		set["gate_mode"] = *u.GateMode
	}
	g := db.w.WithContext(ctx)
	if _, err := db.findTenant(g, name); err != nil {
		return nil, err
	}
	if len(set) > 0 {
		if err := g.Table("tenants").Where("name = ?", name).Updates(set).Error; err != nil {
			return nil, fmt.Errorf("store: update tenant: %w", err)
		}
	}
	return db.tenantInfo(g, name)
}

// UpdateAPIKey implements engram.AdminService. A revoked key can still be
// changed (it stays revoked).
func (db *DB) UpdateAPIKey(ctx context.Context, id string, u engram.KeyUpdate) (*engram.APIKey, error) {
	set := map[string]any{}
	if u.Clearance != nil {
		if !engram.ValidSecurityLevel(*u.Clearance) {
			return nil, engram.Errorf(engram.EINVALID, "clearance must be public, internal, confidential or secret")
		}
		set["clearance"] = *u.Clearance
	}
	if u.MaskPII != nil {
		set["mask_pii"] = *u.MaskPII
	}
	g := db.w.WithContext(ctx)
	if len(set) > 0 {
		res := g.Model(&apiKeyRow{}).Where("id = ?", id).Updates(set)
		if res.Error != nil {
			return nil, fmt.Errorf("store: update key: %w", res.Error)
		}
	}
	keys, err := db.findKeys(g, "api_keys.id = ?", id)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "no API key with id %q", id)
	}
	return keys[0], nil
}

// AnalyzeTables brings the planner's statistics of every table of the
// store up to date now (PostgreSQL's ANALYZE, table by table in the
// store's schema), as autovacuum does within a minute or so of a table's
// growth on a serving database. A schema filled a moment ago has none: on
// it the planner took the tenant's memories for one row and looked for a
// duplicate by reading all of them. SQLite keeps no statistics unless
// asked, and engram never asks, so there it does nothing.
func (db *DB) AnalyzeTables(ctx context.Context) error {
	if db.dialect.name() != "postgres" {
		return nil
	}
	var tables []string
	if err := db.w.WithContext(ctx).Raw(`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`).
		Find(&tables).Error; err != nil {
		return fmt.Errorf("store: analyze: %w", err)
	}
	for _, t := range tables {
		if err := db.w.WithContext(ctx).Exec(`ANALYZE ` + pgx.Identifier{t}.Sanitize()).Error; err != nil {
			return fmt.Errorf("store: analyze %s: %w", t, err)
		}
	}
	return nil
}
