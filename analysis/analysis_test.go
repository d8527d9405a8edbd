package analysis

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestTerms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"I love painting sunrises", []string{"love", "paint", "sunris"}},
		{"我喜欢喝咖啡", []string{"我喜", "喜欢", "欢喝", "喝咖", "咖啡"}},
		{"咖啡", []string{"咖啡"}},
		{"茶", []string{"茶"}},
		{"牙科 appointment at 10:30", []string{"牙科", "appoint", "10", "30"}},
		{`"AND" OR * -x 🙂 '; DROP TABLE memories; --`, []string{"drop", "tabl", "memori"}},
		{"Caroline's café", []string{"carolin", "cafe"}},
		{"下周三去Dentist", []string{"下周", "周三", "三去", "dentist"}},
		{"", nil},
	} {
		if got := Terms(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Terms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestUniqueTerms(t *testing.T) {
	got := UniqueTerms("coffee coffee 咖啡咖啡")
	want := []string{"coffe", "咖啡", "啡咖"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("UniqueTerms = %q, want %q", got, want)
	}
}

func TestQueryTerms(t *testing.T) {
	for in, want := range map[string][]string{
		"When did Caroline go to the support group?": {"carolin", "go", "support", "group"},
		"为什么咖啡这么贵":                                   {"么咖", "咖啡", "啡这", "这么", "么贵"},
		"how?":                                       {"how"},
	} {
		if got := QueryTerms(in); !reflect.DeepEqual(got, want) {
			t.Errorf("QueryTerms(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkJoin analyses memory-sized English text drawn from a
// vocabulary of a few thousand words, as ingest does.
func BenchmarkJoin(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 5000)
	for i := range words {
		w := make([]byte, 4+rng.IntN(8))
		for j := range w {
			w[j] = byte('a' + rng.IntN(26))
		}
		words[i] = string(w) + []string{"ing", "ed", "s", "ation", ""}[rng.IntN(5)]
	}
	texts := make([]string, 1000)
	for i := range texts {
		t := make([]string, 8+rng.IntN(24))
		for j := range t {
			t[j] = words[int(float64(len(words))*rng.Float64()*rng.Float64())]
		}
		texts[i] = strings.Join(t, " ")
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Join(texts[i%len(texts)])
	}
}
