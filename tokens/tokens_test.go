package tokens

import (
	"sync"
	"testing"
)

func TestTokenizer(t *testing.T) {
	for _, tc := range []struct {
		enc, text string
		want      int
	}{
		{"cl100k_base", "hello world", 2},
		{"cl100k_base", "", 0},
		{"cl100k_base", "<|endoftext|>", 7},
		{"cl100k_base", "我喜欢喝咖啡，下周三去看牙科。", 22},
		{"o200k_base", "hello world", 2},
		{"o200k_base", "", 0},
		{"o200k_base", "<|endoftext|>", 7},
	} {
		tok, err := New(tc.enc)
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Count(tc.text); got != tc.want {
			t.Errorf("%s Count(%q) = %d, want %d", tc.enc, tc.text, got, tc.want)
		}
	}
	for _, enc := range []string{"gpt2-nope", "p50k_base"} {
		if _, err := New(enc); err == nil {
			t.Errorf("New(%q) must fail", enc)
		}
	}
	a, _ := New("o200k_base")
	b, _ := New("o200k_base")
	if a.counter != b.counter || a.Encoding() != "o200k_base" {
		t.Error("tokenizers of one encoding must share its counter")
	}
}

func TestTokenizerConcurrent(t *testing.T) {
	tok, err := New("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	want := tok.Count("我喜欢喝咖啡，下周三去看牙科。")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := tok.Count("我喜欢喝咖啡，下周三去看牙科。"); got != want {
				t.Errorf("concurrent count %d != %d", got, want)
			}
		}()
	}
	wg.Wait()
}
