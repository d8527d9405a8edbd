package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/engram-memory/engram"
)

// ensureDefaultKey makes the default tenant, imports ENGRAM_API_KEY if
// set, and otherwise generates a key on first start, saved with mode 0600.
func (m *Main) ensureDefaultKey(ctx context.Context) error {
	tenant := m.Config.Auth.DefaultTenant
	if _, err := m.DB.EnsureTenant(ctx, tenant); err != nil {
		return err
	}
	if secret := m.Config.Auth.APIKey; secret != "" {
		key, err := m.DB.ImportAPIKey(ctx, tenant, configuredKey, secret)
		if err != nil {
			return err
		}
		return m.revokeReplaced(ctx, tenant, key)
	}
	path := filepath.Join(m.Config.DataDir, "api_key")
	has, err := m.DB.HasActiveKey(ctx, tenant)
	if err != nil {
		return err
	}
	if has {
		if _, err := os.Stat(path); err == nil {
			m.KeyFile = path
		}
		return nil
	}
	key, secret, err := m.DB.CreateAPIKey(ctx, tenant, "generated")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		_ = m.DB.RevokeAPIKey(ctx, key.ID)
		return fmt.Errorf("save generated API key: %w", err)
	}
	m.KeyFile = path
	return nil
}

// configuredKey names the key imported from auth.api_key (ENGRAM_API_KEY).
const configuredKey = "configured"

// revokeReplaced revokes the tenant's other live configured keys: a new
// auth.api_key rotates the key, it does not add one beside the old. The
// log names the keys by id, never by secret.
func (m *Main) revokeReplaced(ctx context.Context, tenant string, key *engram.APIKey) error {
	keys, err := m.DB.FindAPIKeys(ctx, tenant)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.Name != configuredKey || k.ID == key.ID || k.RevokedAt != nil {
			continue
		}
		if err := m.DB.RevokeAPIKey(ctx, k.ID); err != nil {
			return err
		}
		m.Logger.Warn("API key rotated: the configured key replaces the previous one, which is revoked",
			"tenant", tenant, "revoked_key_id", k.ID, "revoked_key_prefix", k.Prefix, "key_id", key.ID)
	}
	return nil
}
