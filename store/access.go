package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
)

// accessRef is one memory a recall injected.
type accessRef struct {
	tenant, id string
	at         time.Time
}

type accessKey struct{ tenant, id string }

type accessCount struct {
	n     int
	last  time.Time // the newest recall that injected the memory
	since time.Time // when the first of these accesses was queued
}

// staleAccess is how long an access count may wait for its row (locked
// by others at every flush, or gone) before it is given up, with a
// warning.
const staleAccess = time.Minute

func addAccess(counts map[accessKey]*accessCount, refs []accessRef) {
	now := time.Now()
	for _, a := range refs {
		k := accessKey{a.tenant, a.id}
		c := counts[k]
		if c == nil {
			c = &accessCount{since: now}
			counts[k] = c
		}
		c.n++
		if a.at.After(c.last) {
			c.last = a.at
		}
	}
}

// commitAccess adds the access counts to the memory rows in one
// transaction and removes the counts it added from counts. Unless wait,
// rows another transaction holds are skipped (their counts stay).
func (w *recallWriter) commitAccess(counts map[accessKey]*accessCount, wait bool) error {
	ids := make([]string, 0, len(counts))
	for k := range counts {
		ids = append(ids, k.id)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	ctx := context.Background()
	lock := w.db.dialect.forUpdateSkipLocked
	if wait {
		lock = w.db.dialect.forUpdate
	}
	var done []accessKey
	err := w.db.retry(ctx, func() error {
		done = done[:0]
		return w.conn().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			locked := make([]accessKey, 0, len(counts))
			if w.db.dialect.name() == "postgres" {
				for chunk := range slices.Chunk(ids, 500) {
					var rows []struct{ TenantID, ID string }
					if err := lock(tx.Model(&memoryRow{}).Select("tenant_id, id").Where(inList(tx, "id", chunk)).Order("id")).
						Find(&rows).Error; err != nil {
						return fmt.Errorf("store: lock accessed memories: %w", err)
					}
					for _, r := range rows {
						locked = append(locked, accessKey{r.TenantID, r.ID})
					}
				}
			} else {
				// SQLite's one writer holds every row: there is nothing to
				// lock or pass over, and a memory gone since is no row to
				// update.
				for k := range counts {
					locked = append(locked, k)
				}
			}
			// One statement per tenant and count, whatever the times:
			// grouped by time too, a second of counts would take a
			// statement per recall. The group's newest time stands for
			// all of its memories.
			type group struct {
				tenant string
				n      int
			}
			type members struct {
				ids  []string
				last time.Time
			}
			groups := map[group]*members{}
			for _, k := range locked {
				if c := counts[k]; c != nil {
					g := groups[group{k.tenant, c.n}]
					if g == nil {
						g = &members{}
						groups[group{k.tenant, c.n}] = g
					}
					g.ids = append(g.ids, k.id)
					if c.last.After(g.last) {
						g.last = c.last
					}
					done = append(done, k)
				}
			}
			for g, m := range groups {
				for chunk := range slices.Chunk(m.ids, 500) {
					in, list := inList(tx, "id", chunk)
					if err := tx.Exec(`UPDATE memories SET access_count = access_count + ?, last_accessed_at = ? WHERE `+in+` AND `+
						w.db.dialect.unindexed("tenant_id")+` = ?`, g.n, m.last.UTC(), list, g.tenant).Error; err != nil {
						return fmt.Errorf("store: count access: %w", err)
					}
				}
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, k := range done {
		delete(counts, k)
	}
	return nil
}
