package working

import "testing"

// TestCut: words are counted by spaces, and text without spaces (Chinese)
// by characters, two to a word.
func TestCut(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"one two three", 3, "one two three"},
		{"one two three four", 3, "one two three …"},
		{"  spaced \t out ", 5, "spaced out"},
		{"我们周五晚上到京都，想先去看寺庙再去吃饭", 4, "我们周五晚上到京 …"},
		{"用户：我们周五到", 8, "用户：我们周五到"},
		{"user: 我们周五晚上到京都", 6, "user: 我们周五晚上 …"},
		{"a long english sentence with many words", 20, "a long english sentence with many words"},
	} {
		if got := cut(tc.in, tc.n); got != tc.want {
			t.Errorf("cut(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
