package journal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// BenchmarkKeyWrite is what the mirror adds to a key write, measured in
// one run: a set_memory on SQLite alone, then with the mirror applying
// each write at once (a claim, a feed read, an envelope appended, an
// index file replaced, the position and the cursor written: the worst
// case, one write per step), then with the mirror stepping every 100
// writes, as a busy server's follower does.
func BenchmarkKeyWrite(b *testing.B) {
	for _, c := range []struct {
		name  string
		every int // mirror after this many writes; 0 never
	}{{"store", 0}, {"store+mirror-each", 1}, {"store+mirror-per-100", 100}} {
		b.Run(c.name, func(b *testing.B) {
			db := storetest.Open(b, "sqlite")
			ctx := storetest.Tenant(b, db, "acme")
			mir := newMirror(db, b.TempDir(), "bench", 64<<20)
			content := json.RawMessage(`{"text":"下周三上午十点牙科复诊, then lunch with Sam at the usual place","type":"reminder"}`)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := db.SetKey(ctx, engram.KeyWrite{Key: fmt.Sprintf("/user/calendar/e%05d", i%5000),
					Content: content, Source: json.RawMessage(`"bench"`)}); err != nil {
					b.Fatal(err)
				}
				if c.every > 0 && (i+1)%c.every == 0 {
					if err := mir.Sync(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
