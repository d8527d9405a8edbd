package reflections

import (
	"sort"
	"strings"
	"unicode"

	"github.com/engram-memory/engram"
)

// Group is a set of a tenant's live memories that one reflection covers.
type Group struct {
	Key      string // "work", "work/falcon" (subcategory), "life#Caroline" (tag)
	Category string
	// Subcategory or Tag names the group within its category; both empty
	// for the category's general group.
	Subcategory, Tag string
	// UserID is the end user all members belong to; "" for a group of
	// shared memories (see UserGroups).
	UserID  string
	Members []*engram.Memory // oldest first
}

// UserGroups groups the shared memories and each end user's apart
// (docs/users.md): a group never mixes two users, or a user and the
// shared memories, so that each reflection belongs to one scope. A user's
// group keys start with "@<user>/".
func UserGroups(ms []*engram.Memory, min int) []Group {
	byUser := map[string][]*engram.Memory{}
	var users []string
	for _, m := range ms {
		if _, ok := byUser[m.UserID]; !ok {
			users = append(users, m.UserID)
		}
		byUser[m.UserID] = append(byUser[m.UserID], m)
	}
	sort.Strings(users)
	var out []Group
	for _, u := range users {
		for _, g := range GroupMemories(byUser[u], min) {
			if u != "" {
				g.UserID, g.Key = u, "@"+u+"/"+g.Key
			}
			out = append(out, g)
		}
	}
	return out
}

// GroupMemories assigns each memory to at most one group of at least min
// members, category by category: first its subcategory; then, among the
// memories left, the most common tag, again and again; then the category's
// general group of what remains. Memories in no group of min are left
// out. The result is deterministic: ties go to the name that sorts first.
func GroupMemories(ms []*engram.Memory, min int) []Group {
	byCat := map[string][]*engram.Memory{}
	for _, m := range ms {
		byCat[m.Category] = append(byCat[m.Category], m)
	}
	cats := make([]string, 0, len(byCat))
	for c := range byCat {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	var groups []Group
	for _, cat := range cats {
		members := byCat[cat]
		sort.SliceStable(members, func(i, j int) bool { return older(members[i], members[j]) })
		bySub := map[string][]*engram.Memory{}
		for _, m := range members {
			if m.Subcategory != "" {
				bySub[m.Subcategory] = append(bySub[m.Subcategory], m)
			}
		}
		subs := make([]string, 0, len(bySub))
		for s, list := range bySub {
			if len(list) >= min {
				subs = append(subs, s)
			}
		}
		sort.Strings(subs)
		taken := map[string]bool{}
		for _, s := range subs {
			groups = append(groups, Group{Key: cat + "/" + s, Category: cat, Subcategory: s, Members: bySub[s]})
			for _, m := range bySub[s] {
				taken[m.ID] = true
			}
		}
		for {
			count := map[string]int{}
			for _, m := range members {
				if !taken[m.ID] {
					for _, t := range m.Tags {
						count[t]++
					}
				}
			}
			best := ""
			for t, n := range count {
				if n > count[best] || n == count[best] && t < best {
					best = t
				}
			}
			if best == "" || count[best] < min {
				break
			}
			g := Group{Key: cat + "#" + best, Category: cat, Tag: best}
			for _, m := range members {
				if !taken[m.ID] && hasTag(m, best) {
					g.Members = append(g.Members, m)
					taken[m.ID] = true
				}
			}
			groups = append(groups, g)
		}
		rest := Group{Key: cat, Category: cat}
		for _, m := range members {
			if !taken[m.ID] {
				rest.Members = append(rest.Members, m)
			}
		}
		if len(rest.Members) >= min {
			groups = append(groups, rest)
		}
	}
	return groups
}

func older(a, b *engram.Memory) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.Before(b.CreatedAt)
	}
	return a.ID < b.ID
}

func hasTag(m *engram.Memory, tag string) bool {
	for _, t := range m.Tags {
		if t == tag {
			return true
		}
	}
	return false
}

// chinese reports whether the group is written mostly in Chinese: at least
// a third of its letters are Han characters.
func (g Group) chinese() bool {
	var han, letters int
	for _, m := range g.Members {
		for _, r := range m.Content {
			switch {
			case unicode.Is(unicode.Han, r):
				han++
				letters++
			case unicode.IsLetter(r):
				letters++
			}
		}
	}
	return letters > 0 && han*3 >= letters
}

// Slug is the group's file name under its category's directory (without
// ".md"): "all" for the general group, "sub-<subcategory>", "tag-<tag>".
func (g Group) Slug() string {
	switch {
	case g.Subcategory != "":
		return "sub-" + slug(g.Subcategory)
	case g.Tag != "":
		return "tag-" + slug(g.Tag)
	}
	return "all"
}

// slug keeps letters and digits of any script, lower-cased, and turns
// every other run of characters into one "-"; a long name is cut and
// given a hash of the whole, so two names never share a file.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimSuffix(b.String(), "-")
	if out == "" || out != s || len(out) > 80 {
		short := out
		for len(short) > 60 {
			_, size := lastRune(short)
			short = short[:len(short)-size]
		}
		if short != "" {
			short += "-"
		}
		return short + hash8(s)
	}
	return out
}

func lastRune(s string) (rune, int) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i]&0xC0 != 0x80 {
			return []rune(s[i:])[0], len(s) - i
		}
	}
	return 0, len(s)
}
