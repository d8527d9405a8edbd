package index_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/index"
	"github.com/engram-memory/engram/store/storetest"
)

// BenchmarkSearchConcepts times a category question ("What activities
// does Melanie partake in?") over 10,000 memories whose words include
// many of the lexicon's members, with the concept lexicon and without:
// the lexicon's cost is the members' postings it reads.
func BenchmarkSearchConcepts(b *testing.B) {
	db := storetest.Open(b, "sqlite")
	ix := index.New(db, index.Config{RowCache: 20000})
	ctx := storetest.Tenant(b, db, "bench")
	words := strings.Fields(`Melanie Caroline went tried joined swimming hiking camping pottery painting guitar piano dog cat
		kids husband paris beach museum concert yoga cooking baking pasta coffee work office project meeting
		report friday weekend morning sunset garden book novel movie festival party birthday sister mother
		happy proud nervous school class degree doctor car shoes christmas volunteer shelter charity`)
	rng := rand.New(rand.NewPCG(1, 2))
	for batch := range 20 {
		ms := make([]*engram.Memory, 500)
		for i := range ms {
			var sb strings.Builder
			for range 12 {
				sb.WriteString(words[rng.IntN(len(words))] + " ")
			}
			ms[i] = &engram.Memory{Content: fmt.Sprintf("%s(%d/%d)", sb.String(), batch, i), Category: "life"}
		}
		if _, err := db.CreateMemories(ctx, ms); err != nil {
			b.Fatal(err)
		}
	}
	for _, concepts := range []bool{false, true} {
		b.Run(fmt.Sprintf("concepts=%v", concepts), func(b *testing.B) {
			q := engram.LexicalQuery{Text: "What activities does Melanie partake in?", Limit: 75, Expand: true, Concepts: concepts}
			if _, err := ix.SearchMemories(ctx, q); err != nil { // the tenant's first search loads it
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ix.SearchMemories(context.WithoutCancel(ctx), q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
