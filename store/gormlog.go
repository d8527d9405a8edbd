package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// quietLogger passes to gorm's logger only the statements it would log at
// the store's level (Warn): those that failed, but for a record not
// found, and those slower than slow. gorm's slog logger formats every
// statement's SQL with its values before it looks at either (fc runs a
// regular expression over the statement), which was 7% of a server's CPU
// under load on PostgreSQL.
type quietLogger struct {
	logger.Interface
	slow time.Duration
}

// LogMode implements logger.Interface.
func (l quietLogger) LogMode(level logger.LogLevel) logger.Interface {
	return quietLogger{Interface: l.Interface.LogMode(level), slow: l.slow}
}

// Trace implements logger.Interface.
func (l quietLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	if (err == nil || errors.Is(err, gorm.ErrRecordNotFound)) && time.Since(begin) <= l.slow {
		return
	}
	l.Interface.Trace(ctx, begin, fc, err)
}

// ParamsFilter implements gorm.ParamsFilter for the logger it wraps: gorm
// asks the logger itself, and an embedded logger.Interface does not carry
// the method, so without it every logged statement showed its values
// (ParameterizedQueries: a memory's text, a query, a key's hash).
func (l quietLogger) ParamsFilter(ctx context.Context, sql string, params ...any) (string, []any) {
	if f, ok := l.Interface.(gorm.ParamsFilter); ok {
		return f.ParamsFilter(ctx, sql, params...)
	}
	return sql, nil
}
