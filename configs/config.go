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
	_ "embed"
	"time"

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
	Jobs       JobsConfig            `yaml:"jobs"`
	Sessions   engram.SessionsConfig `yaml:"sessions"`
	Quotas     QuotasConfig          `yaml:"quotas"`
	Mirror     MirrorConfig          `yaml:"mirror"`
}

// QuotasConfig bounds what one tenant may hold; 0 leaves a quota
// unlimited. A write past a quota is refused (403 quota_exceeded) and
// writes nothing, whichever door it came through.
type QuotasConfig struct {
	// MaxMemories bounds the tenant's live (not deleted) memories.
	MaxMemories int64 `yaml:"max_memories"`
	// MaxBytes bounds the bytes of content of those memories.
	MaxBytes int64 `yaml:"max_bytes"`
	// MaxSessions bounds the tenant's L1 sessions (expired ones count
	// until the cleaner deletes them).
	MaxSessions int64 `yaml:"max_sessions"`
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

// LearningConfig configures what recall does to learn from feedback.
type LearningConfig struct {
	// Explore is the share of recalls that hold back one of their three
	// best-scored memories (never P0, never a key the query names) and
	// record it, so that feedback measures each memory's impact.
	Explore float64 `yaml:"explore"`
	// ExploreKinds is the share of the recalls that qualify (a candidate
	// the learned model sinks under half would be one of the three best
	// without it) that probe its kinds: let it in at that score, or leave
	// it where the model ranks it, at even odds, so that feedback measures
	// whether the model is wrong about them (see
	// learning.Recaller.WithKindProbes).
	ExploreKinds float64 `yaml:"explore_kinds"`
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

// JobsConfig configures the long work that leaves the request path on a
// large tenant (docs/jobs.md).
type JobsConfig struct {
	// InlineMaxMemories is the most live memories a tenant may hold for
	// POST /v1/reflect (and the MCP reflect tool) to run in the request; a
	// larger tenant's reflect runs as a job (202). -1 runs every reflect
	// inline.
	InlineMaxMemories int64 `yaml:"inline_max_memories"`
	// Lease is how long a server's claim on a job lasts without renewal
	// (renewed every third of it): a server that dies leaves its job to
	// another after at most this long.
	Lease time.Duration `yaml:"lease"`
	// Poll is how often an idle server looks for queued jobs.
	Poll time.Duration `yaml:"poll"`
	// MaxAttempts is how many runs a job gets before it is failed.
	MaxAttempts int `yaml:"max_attempts"`
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
	// Weight is the embedding's share of a hybrid candidate's relevance,
	// in (0, 1]; the lexical score takes the rest (learning.Recaller.WithDense).
	Weight float64 `yaml:"weight"`
	// AgreeFloor is the least cosine at which one of the query's nearest
	// memories counts as agreeing with it and may pass the relevance cut
	// without the query's words; 0: any of the nearest (learning.DenseConfig).
	AgreeFloor float64 `yaml:"agree_floor"`
	// CacheMB bounds the vectors hybrid recall keeps in memory (0: none,
	// every search reads the store); a tenant's cached vectors are read
	// again once older than Poll, so another server's new vectors are seen
	// within it (store.Options.VectorCacheBytes).
	CacheMB int `yaml:"cache_mb"`
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
	// AdminKey turns the admin API (/v1/admin/...) on: a bearer key that
	// manages tenants, keys, quotas, clearances and lifecycle, and reads
	// no tenant's memories. Empty: the admin API answers 404.
	// ENGRAM_ADMIN_KEY (and _FILE) is short for ENGRAM_AUTH_ADMIN_KEY.
	AdminKey string `yaml:"admin_key" secret:"true"`
	// UserID is the end user `engram mcp` (stdio) acts for when a tool
	// call names none (docs/users.md); "" the tenant's shared memories.
	// ENGRAM_USER_ID is short for ENGRAM_AUTH_USER_ID.
	UserID string `yaml:"user_id"`
	// FailureBurst is how many failed sign-ins or bad bearer keys one
	// client address may send before it is answered 429 (with
	// Retry-After) without its key being checked; it earns one more try
	// every FailureRefill. Successes cost nothing.
	FailureBurst  int           `yaml:"failure_burst"`
	FailureRefill time.Duration `yaml:"failure_refill"`
	// FailureClients bounds the client addresses remembered (the least
	// recently failing are forgotten first).
	FailureClients int `yaml:"failure_clients"`
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
		Auth:       AuthConfig{DefaultTenant: "default", FailureBurst: 10, FailureRefill: time.Second, FailureClients: 10000},
		Limits:     engram.DefaultLimitsConfig(),
		Memory:     engram.DefaultMemoryConfig(),
		Tokens:     TokensConfig{Encoding: "cl100k_base"},
		Router:     RouterConfig{MaxTenants: 1000},
		Index:      IndexConfig{MaxMB: 2048, RowCache: 20000},
		Reflector:  ReflectorConfig{MinGroup: 3, Model: "gpt-4o-mini", Timeout: 30 * time.Second},
		Sleep:      SleepConfig{MergeSimilarity: 0.9, ArchiveBelow: 0.02, CompactAfter: 30 * 24 * time.Hour},
		Jobs:       JobsConfig{InlineMaxMemories: 2000, Lease: 30 * time.Second, Poll: time.Second, MaxAttempts: 3},
		Recall:     engram.DefaultRecallConfig(),
		Feedback:   engram.DefaultFeedbackConfig(),
		Learning:   LearningConfig{Explore: 0.03, ExploreKinds: 0.2},
		Embeddings: EmbeddingsConfig{Model: "text-embedding-3-small", Timeout: 2 * time.Second, Weight: 0.15, CacheMB: 256, Poll: time.Second},
		Mirror:     MirrorConfig{Enabled: "auto", MaxLogBytes: 64 << 20, Poll: time.Second, MaxFiles: 50000, MinFreeBytes: 1 << 30},
		Scoring:    engram.DefaultScoringConfig(),
		Sessions:   engram.DefaultSessionsConfig(),
	}
}
