package working

import (
	"context"
	"time"
)

// CleanupEvery deletes expired sessions every interval until ctx ends,
// logging what it deleted. Any server may run it; deleting what another
// already deleted is a no-op.
func (s *Service) CleanupEvery(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := s.Cleanup(ctx); err != nil {
				s.log.Error("session cleanup failed", "err", err)
			} else if n > 0 {
				s.log.Info("expired sessions deleted", "sessions", n)
			}
		}
	}
}
