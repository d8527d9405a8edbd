package store

import (
	"context"
	"crypto/rand"
	"time"
)

// maxAttempts bounds the retries of a write transaction that lost a
// deadlock or a serialization failure (PostgreSQL).
const maxAttempts = 10

// retry runs fn again after a deadlock or serialization failure
// (PostgreSQL), up to maxAttempts times with a short random back-off: fn
// must be a whole transaction (or one statement), rolled back on failure.
func (db *DB) retry(ctx context.Context, fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil || !db.dialect.isTransient(err) || attempt >= maxAttempts {
			return err
		}
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// backoff sleeps a random time that grows with the attempt (2–4 ms, 4–8
// ms, … up to 256–512 ms: about 2 s over maxAttempts), so transactions
// that collided do not collide again in step, and a writer behind a
// long queue of lock holders outlasts it.
func backoff(ctx context.Context, attempt int) error {
	var b [1]byte
	_, _ = rand.Read(b[:])
	d := 2 * time.Millisecond << min(attempt, 7)
	d += time.Duration(int(b[0])) * d / 256
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
