package web_test

import (
	"context"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/index"
	"github.com/engram-memory/engram/store"
)

// indexed is the store as cmd/engram hands it to recall: lexical search
// is answered by the in-memory index that follows the store's change feed.
type indexed struct {
	*store.DB
	ix *index.Index
}

func withIndex(db *store.DB) indexed {
	return indexed{db, index.New(db, index.Config{RowCache: 1000})}
}

func (s indexed) SearchMemories(ctx context.Context, q engram.LexicalQuery) ([]engram.LexicalHit, error) {
	return s.ix.SearchMemories(ctx, q)
}
