package index

import (
	"context"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram"
)

// Preload loads the tenants that have snapshot files, the most recently
// written first, one after the other, while the loaded indexes stay
// within half the memory bound (the other half is left to the tenants
// that search next); after each load it calls warm, when not nil, with a
// context acting for the tenant, for the caller's other per-tenant
// caches. A server calls it in the background when it starts, so that
// the big tenants it served before — those whose load takes seconds — are
// warm before their users come back; a search that arrives during a load
// waits for it, as it would have loaded the tenant itself. Small tenants
// (no snapshot file) load on first use in milliseconds. It returns the
// tenants loaded, and stops at the first error or when ctx ends.
func (ix *Index) Preload(ctx context.Context, warm func(context.Context) error) (int, error) {
	if ix.cfg.Dir == "" {
		return 0, nil
	}
	entries, err := os.ReadDir(ix.cfg.Dir)
	if err != nil {
		if os.IsNotExist(err) {
			return 0, nil
		}
		return 0, err
	}
	type file struct {
		tenant string
		at     time.Time
	}
	var files []file
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok || !ix.snapshots(id) {
			continue
		}
		if info, err := e.Info(); err == nil {
			files = append(files, file{id, info.ModTime()})
		}
	}
	slices.SortFunc(files, func(a, b file) int { return b.at.Compare(a.at) })
	n := 0
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if ix.loadedBytes() > ix.cfg.MaxBytes/2 {
			break
		}
		tctx := engram.NewContextWithTenant(ctx, f.tenant)
		if _, err := ix.Stats(tctx); err != nil {
			return n, err
		}
		n++
		if warm != nil {
			if err := warm(tctx); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// loadedBytes is the estimated memory of the loaded indexes.
func (ix *Index) loadedBytes() int64 {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var total int64
	for _, t := range ix.tenants {
		total += t.bytes.Load()
	}
	return total
}
