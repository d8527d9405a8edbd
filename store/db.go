// Package store keeps engram's data in SQLite (embedded, the default) or
// PostgreSQL (scale-out) through gorm. Both engines share one code path
// and one test suite; the few dialect differences (lexical search, JSON
// operators) are confined to dialect.go. The schema comes from versioned,
// embedded SQL migrations per dialect; nothing is auto-migrated.
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/engram-memory/engram"
)

// Options configures Open.
// testHookOpen, set only by this package's tests, runs on every store
// Open before any of the store's goroutines starts: what it registers on
// the gorm handles (statement counters) is then never written while a
// goroutine reads them.
var testHookOpen func(*DB)

type Options struct {
	Driver       string // "sqlite" or "postgres"
	DSN          string // postgres DSN, or optional SQLite file path
	DataDir      string // SQLite default location: <DataDir>/engram.db
	MaxOpenConns int    // SQLite readers; PostgreSQL pool size
	BusyTimeout  time.Duration
	Logger       *slog.Logger
	Now          engram.Clock
	Tokens       engram.TokenCounter
	Rules        engram.Rules // validation and defaults of every write
	// RecallFlush and RecallBatch tune the recall writer: a batch of
	// recall records commits after RecallFlush or once it holds
	// RecallBatch recalls. RecallGrace is how long feedback waits for a
	// recall another server made but has not committed yet. AccessFlush
	// is how often the access counts of the committed recalls are added
	// to their memories. 0: the Default… constants.
	RecallFlush time.Duration
	RecallBatch int
	RecallGrace time.Duration
	AccessFlush time.Duration
	// MaxSessionEvents caps the events of one session (0: no cap).
	MaxSessionEvents int64
	// Quotas bound what one tenant may hold (see Quotas).
	Quotas Quotas
	// VectorCacheBytes bounds the vectors hybrid recall keeps in memory
	// (see vectorCache; 0: DefaultVectorCacheBytes, negative: no cache,
	// every search reads the store); VectorCacheTTL is how old a tenant's
	// cached vectors may grow before they are read again, which bounds how
	// long another server's new vectors go unseen (0:
	// DefaultVectorCacheTTL).
	VectorCacheBytes int64
	VectorCacheTTL   time.Duration
}

// DB is an open store. With SQLite, writes go through a single connection
// (SQLite allows one writer; queuing in Go beats SQLITE_BUSY retries) and
// reads through a pool; with PostgreSQL writes and reads have a pool each.
type DB struct {
	w, r    *gorm.DB
	dialect dialect
	now     engram.Clock
	tokens  engram.TokenCounter
	rules   engram.Rules
	log     *slog.Logger
	secret  []byte // signs list cursors; shared through the settings table
	recalls *recallWriter
	// feedbacks groups concurrent feedbacks into shared transactions.
	feedbacks *feedbackGroups
	// applier applies feedback acknowledged before it was applied.
	applier *feedbackApplier
	// pending commits acknowledged feedback in groups.
	pending *pendingQueue
	// checkpoints copies the write-ahead log into the database file off
	// the writer (SQLite; nil on PostgreSQL).
	checkpoints *checkpointer
	// maxSessionEvents and quotas are Options.MaxSessionEvents and
	// Options.Quotas; refusals counts the writes a quota refused.
	maxSessionEvents int64
	quotas           Quotas
	refusals         quotaRefusals
	// vectors caches hybrid recall's vectors (nil: off).
	vectors *vectorCache
}

// Open connects, applies pending migrations and loads the settings.
func Open(ctx context.Context, o Options) (*DB, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Tokens == nil {
		return nil, errors.New("store: a token counter is required")
	}
	const slow = 500 * time.Millisecond
	gcfg := &gorm.Config{
		Logger: quietLogger{slow: slow, Interface: logger.NewSlogLogger(o.Logger.With("component", "gorm"), logger.Config{
			SlowThreshold:             slow,
			LogLevel:                  logger.Warn,
			IgnoreRecordNotFoundError: true,
			ParameterizedQueries:      true, // never log bound values
		})},
		NowFunc:                func() time.Time { return o.Now().UTC() },
		SkipDefaultTransaction: true,
	}
	db := &DB{now: o.Now, tokens: o.Tokens, rules: o.Rules, log: o.Logger, maxSessionEvents: o.MaxSessionEvents, quotas: o.Quotas}
	if o.VectorCacheBytes >= 0 {
		size, ttl := o.VectorCacheBytes, o.VectorCacheTTL
		if size == 0 {
			size = DefaultVectorCacheBytes
		}
		if ttl <= 0 {
			ttl = DefaultVectorCacheTTL
		}
		db.vectors = newVectorCache(size, ttl, o.Now)
	}
	var err error
	switch o.Driver {
	case "sqlite":
		db.dialect = sqliteDialect{}
		err = db.openSQLite(o, gcfg)
	case "postgres":
		db.dialect = postgresDialect{}
		err = db.openPostgres(o, gcfg)
	default:
		err = fmt.Errorf("store: unknown driver %q", o.Driver)
	}
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, db.w, db.dialect); err != nil {
		_ = db.Close()
		return nil, err
	}
	if db.secret, err = db.loadSecret(ctx, "cursor_secret"); err != nil {
		_ = db.Close()
		return nil, err
	}
	if testHookOpen != nil {
		testHookOpen(db)
	}
	db.recalls = newRecallWriter(db, o)
	db.feedbacks = newFeedbackGroups(db)
	db.applier = newFeedbackApplier()
	db.pending = &pendingQueue{db: db}
	return db, nil
}

// openSQLite opens the writer and the reader pool on one database file.
//
//   - journal_mode=WAL: readers never block the writer and vice versa.
//   - synchronous=NORMAL: with WAL a commit is durable against a process
//     crash; only an OS crash can lose the last transactions.
//   - wal_autocheckpoint=0 on the writer: the log is copied into the
//     database file by a connection of its own (see checkpointer).
//   - busy_timeout: wait for locks instead of failing at once (the backup
//     or a CLI verb may hold one briefly).
//   - foreign_keys=on: SQLite leaves them off by default.
//   - _txlock=immediate on the writer: a write transaction takes the lock
//     at BEGIN, so it cannot fail half-way when upgrading a read lock.
//   - the readers are query_only, so a bug cannot write around the writer.
//   - cache_size=-32768: a 32 MiB page cache per connection (SQLite's
//     default is 2 MiB), so a recall's postings and rows are read from
//     memory rather than through the OS on every query.
func (db *DB) openSQLite(o Options, gcfg *gorm.Config) error {
	path := o.DSN
	if path == "" {
		if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
			return fmt.Errorf("store: create data dir: %w", err)
		}
		path = filepath.Join(o.DataDir, "engram.db")
	} else if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("store: create data dir: %w", err)
	}
	// The database holds every tenant's memories: owner-only, like the
	// key file. SQLite gives the -wal and -shm files the same mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("store: create database: %w", err)
	}
	_ = f.Close()
	params := url.Values{}
	params.Set("_journal_mode", "WAL")
	params.Set("_synchronous", "NORMAL")
	params.Set("_busy_timeout", fmt.Sprint(o.BusyTimeout.Milliseconds()))
	params.Set("_foreign_keys", "on")
	params.Set("_cache_size", "-32768")
	// Deleted content is overwritten with zeros, not left in free pages:
	// forgetting a user (store/user.go) leaves no bytes of them in the file.
	params.Set("_secure_delete", "on")
	// Each connection keeps its last 64 prepared statements: compiling a
	// statement cost about a tenth of a recall's CPU (a recall runs four
	// to five). Statements of several commands (the migrations) are not
	// kept, and SQLite prepares a kept one again after a schema change.
	params.Set("_stmt_cache_size", "64")
	writer := "file:" + path + "?" + params.Encode() + "&_txlock=immediate"
	reader := "file:" + path + "?" + params.Encode() + "&_query_only=true"
	if db.w, err = gorm.Open(sqlite.New(sqlite.Config{DriverName: sqliteWriterDriver, DSN: writer}), gcfg); err != nil {
		return fmt.Errorf("store: open sqlite: %w", err)
	}
	if db.r, err = gorm.Open(sqlite.Open(reader), gcfg); err != nil {
		return fmt.Errorf("store: open sqlite: %w", err)
	}
	// The checkpointer's connection waits restartWait for readers (its
	// RESTART checkpoint holds every write back meanwhile), not the
	// store's busy timeout.
	params.Set("_busy_timeout", fmt.Sprint(restartWait.Milliseconds()))
	ckpt, err := sql.Open("sqlite3", "file:"+path+"?"+params.Encode())
	if err != nil {
		return fmt.Errorf("store: open sqlite: %w", err)
	}
	wdb, _ := db.w.DB()
	wdb.SetMaxOpenConns(1)
	db.checkpoints = startCheckpointer(ckpt, wdb, db.log)
	rdb, _ := db.r.DB()
	rdb.SetMaxOpenConns(max(o.MaxOpenConns, 1))
	rdb.SetMaxIdleConns(max(o.MaxOpenConns, 1))
	return nil
}

// openPostgres opens two pools of MaxOpenConns connections each, one
// for write transactions and one for reads, so that reads (a recall)
// never queue for a connection behind writers waiting for row locks.
//
// Every statement is planned with its values (each connection sets
// plan_cache_mode to force_custom_plan once connected, unless the DSN sets
// it; a SET, not a startup parameter, which a pooler such as PgBouncer
// refuses by default): a statement prepared while a
// table was small otherwise kept, after five runs, the generic plan made
// then, which reads the whole of the tenant's rows once the table has
// grown (the rater-cap read of feedback_credits took 10 to 20 ms a group
// after 2,000 feedbacks on a new database, until autovacuum analysed the
// table), and one generic plan cannot fit both a tenant of ten memories
// and one of a million. Planning these short statements costs tens of
// microseconds each.
func (db *DB) openPostgres(o Options, gcfg *gorm.Config) error {
	pcfg, err := pgx.ParseConfig(o.DSN)
	if err != nil {
		return fmt.Errorf("store: open postgres: %w", redactErr(err, o.DSN))
	}
	var opts []stdlib.OptionOpenDB
	if _, ok := pcfg.RuntimeParams["plan_cache_mode"]; !ok {
		opts = append(opts, stdlib.OptionAfterConnect(func(ctx context.Context, c *pgx.Conn) error {
			_, err := c.Exec(ctx, "SET plan_cache_mode = force_custom_plan")
			return err
		}))
	}
	for _, g := range []**gorm.DB{&db.w, &db.r} {
		if *g, err = gorm.Open(postgres.New(postgres.Config{Conn: stdlib.OpenDB(*pcfg, opts...)}), gcfg); err != nil {
			if db.w != nil {
				_ = db.Close()
			}
			return fmt.Errorf("store: open postgres: %w", redactErr(err, o.DSN))
		}
		sdb, _ := (*g).DB()
		sdb.SetMaxOpenConns(max(o.MaxOpenConns, 1))
		sdb.SetMaxIdleConns(max(o.MaxOpenConns, 1))
		sdb.SetConnMaxIdleTime(5 * time.Minute)
	}
	return nil
}

// redactErr keeps a DSN (which may hold a password) out of error text:
// the message names it <dsn>, and the chain below stays for errors.Is and
// errors.As (a caller that prints an unwrapped error prints it whole).
func redactErr(err error, dsn string) error {
	if dsn == "" {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), dsn, "<dsn>"), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Close commits the recall records still queued, then closes every
// connection.
func (db *DB) Close() error {
	if db.applier != nil {
		db.applier.close()
	}
	if db.recalls != nil {
		db.recalls.close()
	}
	var errs []error
	if db.checkpoints != nil {
		errs = append(errs, db.checkpoints.close())
	}
	for _, g := range []*gorm.DB{db.w, db.r} {
		if g == nil {
			continue
		}
		if s, err := g.DB(); err == nil {
			errs = append(errs, s.Close())
		}
		if db.r == db.w {
			break
		}
	}
	return errors.Join(errs...)
}

// Ping checks that the database answers, for /healthz.
func (db *DB) Ping(ctx context.Context) error {
	s, err := db.r.DB()
	if err != nil {
		return err
	}
	return s.PingContext(ctx)
}

// loadSecret returns the named random secret, creating it once. Every
// engram process on the same database reads the same value.
func (db *DB) loadSecret(ctx context.Context, name string) ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	if err := db.w.WithContext(ctx).Exec(
		`INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, name, hex.EncodeToString(b)).Error; err != nil {
		return nil, fmt.Errorf("store: save %s: %w", name, err)
	}
	var value string
	if err := db.w.WithContext(ctx).Raw(`SELECT value FROM settings WHERE name = ?`, name).Scan(&value).Error; err != nil {
		return nil, fmt.Errorf("store: load %s: %w", name, err)
	}
	return hex.DecodeString(value)
}
