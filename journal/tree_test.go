package journal

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram"
)

// Writers with their own file descriptors on one log.jsonl (as two
// processes would have) append lines from 20 bytes to 150 KB at once:
// every line comes out whole. Each line is one write on an O_APPEND file.
func TestAppendsNeverInterleave(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	const writers, lines = 6, 30
	trees := make([]*tree, writers)
	for i := range trees {
		if trees[i], err = openTree(root, "t", 1<<40); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for w, tr := range trees {
		wg.Go(func() {
			for i := range lines {
				body := strings.Repeat(fmt.Sprintf("%c", 'a'+w), 20+(i*i*257)%150_000)
				line, _ := json.Marshal(map[string]any{"seq": w*lines + i + 1, "w": w, "body": body})
				if err := tr.append(append(line, '\n'), int64(w*lines+i+1)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, tr := range trees {
		if err := tr.close(); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(filepath.Join(dir, "t", logFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	seen := map[int]bool{}
	for sc.Scan() {
		var e struct {
			Seq  int    `json:"seq"`
			W    int    `json:"w"`
			Body string `json:"body"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("a line was interleaved or cut: %v (%d bytes)", err, len(sc.Bytes()))
		}
		if strings.Trim(e.Body, string(rune('a'+e.W))) != "" || seen[e.Seq] {
			t.Fatalf("line %d mixed or repeated", e.Seq)
		}
		seen[e.Seq] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != writers*lines {
		t.Fatalf("%d lines, want %d", len(seen), writers*lines)
	}
}

// BenchmarkApply is the mirror's own work per key write, without the
// store: the envelope encoded and appended, the key's index file replaced.
func BenchmarkApply(b *testing.B) {
	root, err := os.OpenRoot(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	tr, err := openTree(root, "t", 64<<20)
	if err != nil {
		b.Fatal(err)
	}
	defer tr.close()
	data := json.RawMessage(`{"text":"下周三上午十点牙科复诊, then lunch with Sam at the usual place","type":"reminder"}`)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m := &engram.Memory{ID: fmt.Sprintf("mem_%05d", i%5000), Key: fmt.Sprintf("/user/calendar/e%05d", i%5000),
			Category: "life", Valid: true, Data: data, Source: json.RawMessage(`"bench"`), Version: int64(i + 1)}
		c := &engram.Change{Seq: int64(i + 1), MemoryID: m.ID, Version: m.Version, Action: engram.ActionUpdate, After: m, At: time.Now()}
		if err := tr.apply(c); err != nil {
			b.Fatal(err)
		}
	}
}

// plainJSON keeps members, their order and numbers as written and spells
// strings with their characters.
func TestPlainJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"b": 1.50, "a": [true, null, "\u7259\u79d1 <b>&</b>", -0e3], "c": {}, "d": []}`: `{"b":1.50,"a":[true,null,"牙科 <b>&</b>",-0e3],"c":{},"d":[]}`,
		`"line\nbreak \"quoted\" \\ tab\t"`:                                               `"line\nbreak \"quoted\" \\ tab\t"`,
		`[[[{"x":[{}]}]]]`:                                                                `[[[{"x":[{}]}]]]`,
		` 12345678901234567890 `:                                                          `12345678901234567890`,
	} {
		got, err := plainJSON([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("plainJSON(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{`{"a":`, `[1,`, ``, `1 2`, `{} []`} {
		if got, err := plainJSON([]byte(bad)); err == nil {
			t.Errorf("plainJSON(%s) = %s, want an error", bad, got)
		}
	}
}
