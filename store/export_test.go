package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// InsertSyntheticPairs stores n generated preference pairs for the tenant
// in ctx, a thousand per statement. It exists for the export benchmark
// (store_test), which needs a million pairs without a million feedback
// round trips; being a _test.go file, it is not part of the product.
func InsertSyntheticPairs(ctx context.Context, db *DB, n int) error {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return err
	}
	now := db.now().UTC()
	return db.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		const per = 1000
		for start := 0; start < n; start += per {
			rows := make([]pairRow, 0, per)
			for i := start; i < min(start+per, n); i++ {
				rows = append(rows, pairRow{ID: fmt.Sprintf("pair_synthetic%09d", i), TenantID: tenant, Kind: "regeneration",
					DedupeKey: fmt.Sprint("synthetic:", i), Prompt: fmt.Sprintf("Question %d: 明天早上喝什么咖啡？", i),
					Chosen: "A flat white, no sugar, as you asked last week.", Rejected: "An espresso with two sugars.",
					Margin: 2, Category: "preference", ChosenInteractionID: "int_a", RejectedInteractionID: "int_b",
					FeedbackIDs: `["fb_a","fb_b"]`, ChosenMemories: `[{"id":"mem_a","version":3}]`, RejectedMemories: `[]`,
					CreatedAt: now.Add(time.Duration(i) * time.Microsecond)})
			}
			if err := tx.CreateInBatches(rows, 100).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

// Exec runs a raw statement on the writer, for tests that provoke a
// database error on purpose.
func (db *DB) Exec(sql string, args ...any) error { return db.w.Exec(sql, args...).Error }

// UniqueRule names the unique rule that err broke, as the store reads it:
// dedupe, key, event_version or other.
func (db *DB) UniqueRule(err error) string {
	return [...]string{ruleOther: "other", ruleDedupe: "dedupe", ruleKey: "key", ruleEventVersion: "event_version"}[db.dialect.uniqueRule(err)]
}

// RedactErr is redactErr.
var RedactErr = redactErr

// CountRows counts a table's rows of every tenant, for tests that check
// what a write left.
func (db *DB) CountRows(table string) (int64, error) {
	var n int64
	err := db.r.Table(table).Count(&n).Error
	return n, err
}

// CachedVectors is how many vectors db's vector cache holds for the
// tenant in ctx, every model, for the cache's tests.
func CachedVectors(ctx context.Context, db *DB) int {
	tenant, err := tenantOf(ctx)
	if err != nil || db.vectors == nil {
		return 0
	}
	db.vectors.mu.Lock()
	defer db.vectors.mu.Unlock()
	n := 0
	for k, s := range db.vectors.sets {
		if k.tenant == tenant {
			s.mu.RLock()
			n += len(s.rows)
			s.mu.RUnlock()
		}
	}
	return n
}
