package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// traces records the statements a logger was asked to trace.
type traces struct {
	logger.Interface
	n int
}

func (t *traces) Trace(_ context.Context, _ time.Time, fc func() (string, int64), _ error) {
	t.n++
	fc()
}

// TestQuietLogger: the store's gorm logger formats and passes on only
// what the store logs, failed and slow statements, and never formats the
// SQL of the others.
func TestQuietLogger(t *testing.T) {
	inner := &traces{Interface: logger.Discard}
	l := quietLogger{Interface: inner, slow: time.Second}
	formatted := 0
	fc := func() (string, int64) { formatted++; return "SELECT 1", 1 }
	now := time.Now()
	for _, c := range []struct {
		name  string
		begin time.Time
		err   error
		want  int
	}{
		{"fast", now, nil, 0},
		{"not found", now, gorm.ErrRecordNotFound, 0},
		{"failed", now, errors.New("disk I/O error"), 1},
		{"slow", now.Add(-2 * time.Second), nil, 1},
	} {
		inner.n, formatted = 0, 0
		l.Trace(context.Background(), c.begin, fc, c.err)
		if inner.n != c.want || formatted != c.want {
			t.Errorf("%s: traced %d, formatted %d; want %d", c.name, inner.n, formatted, c.want)
		}
	}
	if _, ok := l.LogMode(logger.Info).(quietLogger); !ok {
		t.Error("LogMode dropped the quiet logger")
	}
}
