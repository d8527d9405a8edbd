package index

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// The lexicon's every line is "categories: members"; every category word
// makes one index term; every Chinese member is two characters or more
// (a lone character is no term of a longer run); and both languages have
// the core categories.
func TestConceptLexicon(t *testing.T) {
	for line := range strings.Lines(conceptLexicon) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		keys, members, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(members) == "" {
			t.Errorf("line without members: %q", line)
			continue
		}
		for m := range strings.SplitSeq(members, ",") {
			if m = strings.TrimSpace(m); m == "" || cjkTerm(m) && utf8.RuneCountInString(m) < 2 {
				t.Errorf("member %q of %q", m, keys)
			}
		}
	}
	for _, c := range []string{"activ", "hobbi", "pet", "famili", "relationship", "book", "instrument", "food", "job",
		"爱好", "宠物", "家人", "感情", "乐器", "工作"} {
		if len(concepts[c]) == 0 {
			t.Errorf("no members for %q", c)
		}
	}
	for q, want := range map[string]bool{
		"What activities does Ann do?": true, "Which pets has Ann got?": true, "Where has Ann traveled?": true,
		"How does Ann feel about her job?": false, "When did Ann get her pets?": false, "Why does Ann love books?": false,
		"安有什么爱好？": true, "安什么时候养的宠物？": false, "安为什么喜欢看书？": false,
	} {
		if got := len(conceptTerms(q, nil)) > 0; got != want {
			t.Errorf("%q expands: %v, want %v", q, got, want)
		}
	}
}
