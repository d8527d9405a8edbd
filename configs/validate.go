package configs

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/engram-memory/engram"
)

// Validate reports every invalid value at once, naming its key.
func (c Config) Validate() error {
	var errs []string
	bad := func(key, format string, args ...any) {
		errs = append(errs, key+": "+fmt.Sprintf(format, args...))
	}
	if c.DataDir == "" {
		bad("data_dir", "must not be empty")
	}
	if _, _, err := net.SplitHostPort(c.Server.Addr); err != nil {
		bad("server.addr", "want host:port, got %q", c.Server.Addr)
	}
	if c.Server.LogFormat != "text" && c.Server.LogFormat != "json" {
		bad("server.log_format", "want text or json, got %q", c.Server.LogFormat)
	}
	switch c.Server.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("server.log_level", "want debug, info, warn or error, got %q", c.Server.LogLevel)
	}
	for _, p := range c.Server.TrustedProxies {
		if net.ParseIP(p) == nil {
			if _, _, err := net.ParseCIDR(p); err != nil {
				bad("server.trusted_proxies", "%q is not an IP or CIDR", p)
			}
		}
	}
	if c.Server.ShutdownTimeout <= 0 || c.Server.ReadHeaderTimeout <= 0 {
		bad("server", "timeouts must be positive")
	}
	switch c.Store.Driver {
	case "sqlite":
	case "postgres":
		if c.Store.DSN == "" {
			bad("store.dsn", "required when store.driver is postgres")
		}
	default:
		bad("store.driver", "want sqlite or postgres, got %q", c.Store.Driver)
	}
	if c.Store.MaxOpenConns < 1 {
		bad("store.max_open_conns", "must be at least 1")
	}
	if c.Store.BusyTimeout < 0 {
		bad("store.busy_timeout", "must not be negative")
	}
	if c.Auth.DefaultTenant == "" {
		bad("auth.default_tenant", "must not be empty")
	}
	if c.Auth.APIKey != "" && len(c.Auth.APIKey) < 16 {
		bad("auth.api_key", "must be at least 16 characters")
	}
	if c.Auth.AdminKey != "" && len(c.Auth.AdminKey) < 16 {
		bad("auth.admin_key", "must be at least 16 characters")
	}
	if c.Auth.AdminKey != "" && c.Auth.AdminKey == c.Auth.APIKey {
		bad("auth.admin_key", "must differ from auth.api_key")
	}
	if a := c.Auth; a.FailureBurst < 1 || a.FailureRefill <= 0 || a.FailureClients < 1 {
		bad("auth", "failure_burst and failure_clients must be at least 1 and failure_refill positive")
	}
	if q := c.Quotas; q.MaxMemories < 0 || q.MaxBytes < 0 || q.MaxSessions < 0 {
		bad("quotas", "max_memories, max_bytes and max_sessions must not be negative (0: unlimited)")
	}
	l := c.Limits
	for key, n := range map[string]int64{
		"limits.max_body_bytes": l.MaxBodyBytes, "limits.max_import_bytes": l.MaxImportBytes, "limits.max_json_depth": int64(l.MaxJSONDepth), "limits.max_batch": int64(l.MaxBatch),
		"limits.max_content_chars": int64(l.MaxContentChars), "limits.max_summary_chars": int64(l.MaxSummaryChars),
		"limits.max_tags": int64(l.MaxTags), "limits.max_tag_chars": int64(l.MaxTagChars),
		"limits.max_key_bytes": int64(l.MaxKeyBytes), "limits.max_key_segment_bytes": int64(l.MaxKeySegmentBytes),
		"limits.default_list_limit": int64(l.DefaultListLimit), "limits.max_list_limit": int64(l.MaxListLimit),
	} {
		if n < 1 {
			bad(key, "must be at least 1")
		}
	}
	if l.DefaultListLimit > l.MaxListLimit {
		bad("limits.default_list_limit", "must not exceed limits.max_list_limit")
	}
	if len(c.Memory.Categories) == 0 {
		bad("memory.categories", "must not be empty")
	}
	seen := map[string]bool{}
	for _, cat := range c.Memory.Categories {
		if !engram.ValidName(cat) {
			bad("memory.categories", "%q: want lower-case letters, digits, '-' or '_'", cat)
		}
		seen[cat] = true
	}
	if !seen[c.Memory.DefaultCategory] {
		bad("memory.default_category", "%q is not in memory.categories", c.Memory.DefaultCategory)
	}
	if !c.Memory.DefaultPriority.Valid() {
		bad("memory.default_priority", "want P0, P1, P2 or P3, got %q", c.Memory.DefaultPriority)
	}
	if c.Memory.DefaultConfidence < 0 || c.Memory.DefaultConfidence > 1 {
		bad("memory.default_confidence", "must be in [0, 1]")
	}
	if c.Memory.Untrusted != "reject" && c.Memory.Untrusted != "quarantine" {
		bad("memory.untrusted", "want reject or quarantine, got %q", c.Memory.Untrusted)
	}
	if c.Memory.Gate != "on" && c.Memory.Gate != "off" {
		bad("memory.gate", "want on or off, got %q", c.Memory.Gate)
	}
	if c.Memory.GateMode != engram.GateRefuse && c.Memory.GateMode != engram.GateQuarantine {
		bad("memory.gate_mode", "want refuse or quarantine, got %q", c.Memory.GateMode)
	}
	if rc := c.Reflector; rc.MinGroup < 2 {
		bad("reflector.min_group", "must be at least 2")
	} else if rc.BaseURL != "" {
		if u, err := url.Parse(rc.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("reflector.base_url", "want an http(s) URL such as https://api.openai.com/v1")
		}
		if rc.Model == "" || rc.Timeout <= 0 {
			bad("reflector", "model and a positive timeout are needed when reflector.base_url is set")
		}
	}
	if sc := c.Sleep; sc.Interval < 0 || sc.CompactAfter <= 0 || !(sc.MergeSimilarity > 0 && sc.MergeSimilarity <= 1) ||
		!(sc.ArchiveBelow >= 0 && sc.ArchiveBelow < 1) {
		bad("sleep", "interval ≥ 0, compact_after > 0, merge_similarity in (0, 1] and archive_below in [0, 1)")
	}
	if jc := c.Jobs; jc.InlineMaxMemories < -1 || jc.Lease < 300*time.Millisecond || jc.Poll <= 0 || jc.MaxAttempts < 1 {
		bad("jobs", "inline_max_memories ≥ -1, lease ≥ 300ms, poll > 0 and max_attempts ≥ 1")
	}
	if sc := c.Sessions; sc.TTL <= 0 || sc.CleanupInterval < 0 || sc.WholeRounds < 1 || sc.MaxPersonaBytes < 1 || sc.MaxEvents < 1 {
		bad("sessions", "ttl > 0, cleanup_interval ≥ 0, whole_rounds ≥ 1, max_persona_bytes ≥ 1 and max_events ≥ 1")
	} else if sc.ChatBaseURL != "" {
		if u, err := url.Parse(sc.ChatBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("sessions.chat_base_url", "want an http(s) URL such as https://api.openai.com/v1")
		}
		if sc.ChatModel == "" || sc.ChatTimeout <= 0 {
			bad("sessions", "chat_model and a positive chat_timeout are needed when sessions.chat_base_url is set")
		}
	}
	if mc := c.Mirror; mc.Enabled != "auto" && mc.Enabled != "true" && mc.Enabled != "false" {
		bad("mirror.enabled", "want auto, true or false, got %q", mc.Enabled)
	}
	if mc := c.Mirror; mc.MaxLogBytes < 4096 || mc.Poll <= 0 || mc.MaxFiles < 0 || mc.MinFreeBytes < 0 {
		bad("mirror", "max_log_bytes must be at least 4096, poll positive, max_files and min_free_bytes 0 or more")
	}
	if c.Router.MaxTenants < 1 {
		bad("router.max_tenants", "must be at least 1")
	}
	if c.Index.MaxMB < 1 || c.Index.RowCache < 0 {
		bad("index", "max_mb must be at least 1 and row_cache at least 0")
	}
	if c.Tokens.Encoding != "cl100k_base" && c.Tokens.Encoding != "o200k_base" {
		bad("tokens.encoding", "want cl100k_base or o200k_base, got %q", c.Tokens.Encoding)
	}
	r := c.Recall
	for key, n := range map[string]int{"recall.max_budget": r.MaxBudget, "recall.max_query_chars": r.MaxQueryChars,
		"recall.candidates": r.Candidates, "recall.pinned": r.Pinned, "recall.context_window": r.ContextWindow} {
		if n < 1 {
			bad(key, "must be at least 1")
		}
	}
	if e := c.Embeddings; e.BaseURL != "" {
		if u, err := url.Parse(e.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("embeddings.base_url", "want an http(s) URL such as https://api.openai.com/v1")
		}
		if e.Model == "" {
			bad("embeddings.model", "must not be empty when embeddings.base_url is set")
		}
		if e.Timeout <= 0 || e.Poll <= 0 {
			bad("embeddings", "timeout and poll must be positive")
		}
		if e.Dimensions < 0 {
			bad("embeddings.dimensions", "must not be negative")
		}
		if !(e.Weight > 0 && e.Weight <= 1) {
			bad("embeddings.weight", "must be in (0, 1]")
		}
		if !(e.AgreeFloor >= 0 && e.AgreeFloor < 1) {
			bad("embeddings.agree_floor", "must be in [0, 1)")
		}
		if e.CacheMB < 0 {
			bad("embeddings.cache_mb", "must not be negative")
		}
	}
	fc := c.Feedback
	if fc.ConfidenceStep <= 0 || fc.ConfidenceStep > 1 || fc.RewardRate <= 0 || fc.RewardRate > 1 {
		bad("feedback", "confidence_step and reward_rate must be in (0, 1]")
	}
	if fc.RevisionThreshold < 1 || fc.RaterCap < 1 || fc.MaxTextChars < 1 || fc.RaterWindow <= 0 {
		bad("feedback", "revision_threshold, rater_cap, max_text_chars and rater_window must be positive")
	}
	if x := c.Learning.Explore; !(x >= 0 && x <= 0.5) {
		bad("learning.explore", "must be in [0, 0.5]")
	}
	if x := c.Learning.ExploreKinds; !(x >= 0 && x <= 1) {
		bad("learning.explore_kinds", "must be in [0, 1]")
	}
	if r.OffRouteWeight < 0 || r.OffRouteWeight > 1 {
		bad("recall.off_route_weight", "must be in [0, 1]")
	}
	if r.MinRouted < 0 {
		bad("recall.min_routed", "must not be negative")
	}
	if len(errs) > 0 {
		return errors.New("config: invalid:\n  " + strings.Join(errs, "\n  "))
	}
	return nil
}
