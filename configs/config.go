// Package configs holds engram's typed configuration and engram.yaml, the
// file that lists every key with its default.
//
// Values are layered: defaults in code (Default), then the YAML file, then
// ENGRAM_* environment variables, then Validate. A key's variable is its
// YAML path upper-cased and joined by "_" (store.dsn → ENGRAM_STORE_DSN);
// secrets also accept a _FILE variant naming a file that holds the value
// (ENGRAM_STORE_DSN_FILE). ENGRAM_API_KEY is short for ENGRAM_AUTH_API_KEY.
package configs

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/engram-memory/engram"
)

// DefaultYAML is configs/engram.yaml: every key, commented, at its default.
//
//go:embed engram.yaml
var DefaultYAML []byte

// Config is the whole configuration of an engram process.
type Config struct {
	DataDir    string                `yaml:"data_dir"`
	Server     ServerConfig          `yaml:"server"`
	Store      StoreConfig           `yaml:"store"`
	Auth       AuthConfig            `yaml:"auth"`
	Limits     engram.LimitsConfig   `yaml:"limits"`
	Memory     engram.MemoryConfig   `yaml:"memory"`
	Tokens     TokensConfig          `yaml:"tokens"`
	Router     RouterConfig          `yaml:"router"`
	Index      IndexConfig           `yaml:"index"`
	Recall     engram.RecallConfig   `yaml:"recall"`
	Scoring    engram.ScoringConfig  `yaml:"scoring"`
	Embeddings EmbeddingsConfig      `yaml:"embeddings"`
	Feedback   engram.FeedbackConfig `yaml:"feedback"`
	Learning   LearningConfig        `yaml:"learning"`
	Reflector  ReflectorConfig       `yaml:"reflector"`
	Sleep      SleepConfig           `yaml:"sleep"`
	Sessions   engram.SessionsConfig `yaml:"sessions"`
	Mirror     MirrorConfig          `yaml:"mirror"`
}

// MirrorConfig configures the file mirror (journal): every tenant's
// memories as files under Dir for agents that search with ls, grep and jq.
type MirrorConfig struct {
	// Enabled is "auto" (on with SQLite, off with PostgreSQL), "true" or
	// "false". With PostgreSQL several servers share one database but each
	// has its own disk, and the mirror's cursor is one per database: turn
	// it on for one server (or for servers sharing one data directory).
	Enabled string `yaml:"enabled"`
	// Dir holds the mirror; empty means <data_dir>/mirror.
	Dir string `yaml:"dir"`
	// MaxLogBytes archives a tenant's log.jsonl before it grows past this.
	MaxLogBytes int64 `yaml:"max_log_bytes"`
	// Poll is how often an idle server looks for writes to mirror.
	Poll time.Duration `yaml:"poll"`
	// MaxFiles is each tenant's budget of index/ and memories/ files (0: none; see engram.yaml).
	MaxFiles int64 `yaml:"max_files"`
	// MinFreeBytes stay free on the mirror's disk (0: no margin; see engram.yaml).
	MinFreeBytes int64 `yaml:"min_free_bytes"`
}

// MirrorOn reports whether the file mirror runs: mirror.enabled, where
// "auto" means on with SQLite only.
func (c Config) MirrorOn() bool {
	return c.Mirror.Enabled == "true" || c.Mirror.Enabled == "auto" && c.Store.Driver == "sqlite"
}

// MirrorDir is where the file mirror lives.
func (c Config) MirrorDir() string {
	if c.Mirror.Dir != "" {
		return c.Mirror.Dir
	}
	return filepath.Join(c.DataDir, "mirror")
}

// LearningConfig configures what recall does to learn from feedback.
type LearningConfig struct {
	// Explore is the share of recalls that hold back one of their three
	// best-scored memories (never P0, never a key the query names) and
	// record it, so that feedback measures each memory's impact.
	Explore float64 `yaml:"explore"`
}

// ReflectorConfig configures the L3 reflector. With BaseURL empty it is
// extractive (no model); with an OpenAI-compatible chat endpoint it writes
// abstractive reflections and falls back to the extractive writer on any
// failure.
type ReflectorConfig struct {
	MinGroup int           `yaml:"min_group"`
	BaseURL  string        `yaml:"base_url"`
	Model    string        `yaml:"model"`
	APIKey   string        `yaml:"api_key" secret:"true"`
	Timeout  time.Duration `yaml:"timeout"`
}

// SleepConfig configures the sleep cycle.
type SleepConfig struct {
	// Interval runs the sleep cycle inside engram serve this often; 0 runs
	// it only on demand (engram sleep).
	Interval        time.Duration `yaml:"interval"`
	MergeSimilarity float64       `yaml:"merge_similarity"`
	ArchiveBelow    float64       `yaml:"archive_below"`
	CompactAfter    time.Duration `yaml:"compact_after"`
}

// EmbeddingsConfig turns on hybrid recall through an OpenAI-compatible
// embeddings endpoint. Off while BaseURL is empty.
type EmbeddingsConfig struct {
	BaseURL    string        `yaml:"base_url"`
	Model      string        `yaml:"model"`
	APIKey     string        `yaml:"api_key" secret:"true"`
	Dimensions int           `yaml:"dimensions"`
	Timeout    time.Duration `yaml:"timeout"`
	// Poll is how often an idle server looks for memories to embed: new
	// text gets its vector within about this long (lexical search finds
	// it at once).
	Poll time.Duration `yaml:"poll"`
}

// ServerConfig configures the HTTP server.
type ServerConfig struct {
	Addr              string        `yaml:"addr"`
	LogFormat         string        `yaml:"log_format"`
	LogLevel          string        `yaml:"log_level"`
	TrustedProxies    []string      `yaml:"trusted_proxies"`
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	ShutdownTimeout   time.Duration `yaml:"shutdown_timeout"`
}

// StoreConfig chooses and tunes the database.
type StoreConfig struct {
	Driver       string        `yaml:"driver"`
	DSN          string        `yaml:"dsn" secret:"true"`
	MaxOpenConns int           `yaml:"max_open_conns"`
	BusyTimeout  time.Duration `yaml:"busy_timeout"`
}

// AuthConfig configures API keys.
type AuthConfig struct {
	APIKey        string `yaml:"api_key" secret:"true"`
	DefaultTenant string `yaml:"default_tenant"`
}

// RouterConfig tunes the query router's per-tenant models, which are a
// cache of the store's change feed.
type RouterConfig struct {
	// MaxTenants bounds the tenants whose learned models one process keeps
	// in memory; the least recently used are evicted and rebuilt from the
	// store when next queried.
	MaxTenants int `yaml:"max_tenants"`
}

// IndexConfig bounds recall's in-memory lexical index, a cache of the
// store's change feed (one index per tenant).
type IndexConfig struct {
	// MaxMB bounds, in MiB, the estimated memory of the tenants' indexes
	// and row caches one process keeps; past it the least recently used
	// tenants are dropped and reloaded from the store when next searched.
	MaxMB int64 `yaml:"max_mb"`
	// RowCache is how many candidate rows each tenant's index keeps.
	RowCache int `yaml:"row_cache"`
}

// TokensConfig chooses the tokenizer used for token counts and budgets.
type TokensConfig struct {
	Encoding string `yaml:"encoding"`
}

// Default returns the built-in defaults; engram.yaml repeats them.
func Default() Config {
	return Config{
		DataDir: "./data",
		Server: ServerConfig{
			Addr:              "127.0.0.1:8080",
			LogFormat:         "text",
			LogLevel:          "info",
			TrustedProxies:    []string{},
			ReadHeaderTimeout: 10 * time.Second,
			ShutdownTimeout:   15 * time.Second,
		},
		Store: StoreConfig{
			Driver:       "sqlite",
			MaxOpenConns: 8,
			BusyTimeout:  5 * time.Second,
		},
		Auth:       AuthConfig{DefaultTenant: "default"},
		Limits:     engram.DefaultLimitsConfig(),
		Memory:     engram.DefaultMemoryConfig(),
		Tokens:     TokensConfig{Encoding: "cl100k_base"},
		Router:     RouterConfig{MaxTenants: 1000},
		Index:      IndexConfig{MaxMB: 2048, RowCache: 20000},
		Reflector:  ReflectorConfig{MinGroup: 3, Model: "gpt-4o-mini", Timeout: 30 * time.Second},
		Sleep:      SleepConfig{MergeSimilarity: 0.9, ArchiveBelow: 0.02, CompactAfter: 30 * 24 * time.Hour},
		Recall:     engram.DefaultRecallConfig(),
		Feedback:   engram.DefaultFeedbackConfig(),
		Learning:   LearningConfig{Explore: 0.03},
		Embeddings: EmbeddingsConfig{Model: "text-embedding-3-small", Timeout: 2 * time.Second, Poll: time.Second},
		Mirror:     MirrorConfig{Enabled: "auto", MaxLogBytes: 64 << 20, Poll: time.Second, MaxFiles: 50000, MinFreeBytes: 1 << 30},
		Scoring:    engram.DefaultScoringConfig(),
		Sessions:   engram.DefaultSessionsConfig(),
	}
}

// Load returns Default, overlaid with the YAML file at path (if path is
// not empty), then with the environment, then validated.
func Load(path string, environ []string) (Config, error) {
	cfg := Default()
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return cfg, fmt.Errorf("config: %w", err)
		}
		if err := decodeYAML(b, &cfg); err != nil {
			return cfg, fmt.Errorf("config: %s: %w", path, err)
		}
	}
	if err := applyEnv(&cfg, environ); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

func decodeYAML(b []byte, cfg *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return err // io.EOF: an empty file overrides nothing
	}
	return nil
}

// applyEnv overlays ENGRAM_* variables on cfg.
func applyEnv(cfg *Config, environ []string) error {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "ENGRAM_") {
			env[k] = v
		}
	}
	if v, ok := env["ENGRAM_API_KEY"]; ok {
		env["ENGRAM_AUTH_API_KEY"] = v
	}
	if v, ok := env["ENGRAM_API_KEY_FILE"]; ok {
		env["ENGRAM_AUTH_API_KEY_FILE"] = v
	}
	return walk(reflect.ValueOf(cfg).Elem(), "ENGRAM", func(name string, f reflect.Value, secret bool) error {
		raw, ok := env[name]
		if secret {
			if file, fok := env[name+"_FILE"]; fok {
				b, err := os.ReadFile(file)
				if err != nil {
					return fmt.Errorf("config: %s_FILE: %w", name, err)
				}
				raw, ok = strings.TrimSpace(string(b)), true
			}
		}
		if !ok {
			return nil
		}
		if err := setValue(f, raw); err != nil {
			return fmt.Errorf("config: %s: %w", name, err)
		}
		return nil
	})
}

// walk calls fn for every leaf field of v with its environment name.
func walk(v reflect.Value, prefix string, fn func(name string, f reflect.Value, secret bool) error) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name := prefix + "_" + strings.ToUpper(sf.Tag.Get("yaml"))
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			if err := walk(f, name, fn); err != nil {
				return err
			}
			continue
		}
		if err := fn(name, f, sf.Tag.Get("secret") == "true"); err != nil {
			return err
		}
	}
	return nil
}

func setValue(f reflect.Value, raw string) error {
	switch f.Interface().(type) {
	case time.Duration:
		d, err := time.ParseDuration(raw)
		if err != nil {
			return err
		}
		f.SetInt(int64(d))
		return nil
	case []string:
		var list []string
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				list = append(list, s)
			}
		}
		f.Set(reflect.ValueOf(list))
		return nil
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(raw)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return fmt.Errorf("want an integer, got %q", raw)
		}
		f.SetInt(n)
	case reflect.Float64:
		x, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return fmt.Errorf("want a number, got %q", raw)
		}
		f.SetFloat(x)
	case reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", raw)
		}
		f.SetBool(b)
	default:
		return fmt.Errorf("unsupported type %s", f.Type())
	}
	return nil
}

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
	l := c.Limits
	for key, n := range map[string]int64{
		"limits.max_body_bytes": l.MaxBodyBytes, "limits.max_json_depth": int64(l.MaxJSONDepth), "limits.max_batch": int64(l.MaxBatch),
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
	if sc := c.Sessions; sc.TTL <= 0 || sc.CleanupInterval < 0 || sc.WholeRounds < 1 || sc.MaxPersonaBytes < 1 {
		bad("sessions", "ttl > 0, cleanup_interval ≥ 0, whole_rounds ≥ 1 and max_persona_bytes ≥ 1")
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

// Rules returns the write rules (validation and defaults) of c.
func (c Config) Rules() engram.Rules {
	return engram.Rules{Memory: c.Memory, Limits: c.Limits, Scoring: c.Scoring}
}
