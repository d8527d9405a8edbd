// Package indextest gives tests the store as cmd/engram hands it to
// recall: a real store whose lexical search is answered by the in-memory
// index that follows the store's change feed.
package indextest

import (
	"context"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/index"
	"github.com/engram-memory/engram/store"
)

// Store is a store whose SearchMemories is answered by Index.
type Store struct {
	*store.DB
	Index *index.Index
}

// Wrap puts a fresh index (with a row cache) over db.
func Wrap(db *store.DB) Store {
	return Store{db, index.New(db, index.Config{RowCache: 1000})}
}

// SearchMemories answers from the index.
func (s Store) SearchMemories(ctx context.Context, q engram.LexicalQuery) ([]engram.LexicalHit, error) {
	return s.Index.SearchMemories(ctx, q)
}
