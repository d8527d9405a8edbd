package reflections

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
	"github.com/engram-memory/engram/internal/topk"
)

// FormatVersion changes when the extractive writer's output changes, so
// that every group is written again once.
const FormatVersion = "1"

// ExtractiveWriter names the deterministic writer.
const ExtractiveWriter = "extractive"

// Limits of the extractive writer: claims per section, characters per
// claim, and the most central members compared pairwise for
// contradictions (the comparison is quadratic).
const (
	maxKnown         = 7
	maxPerSection    = 5
	maxClaimRunes    = 280
	contradictionCap = 200
	// similarSubject is the term overlap (Jaccard) at which two memories
	// are taken to speak of the same subject.
	similarSubject = 0.5
)

// MemoryLink is where the console shows a memory; a citation links there.
func MemoryLink(id string) string { return "/console/memories/" + id }

// fingerprint identifies a group's members, their versions and the
// writer: the reflection is re-written only when it changes.
func fingerprint(g Group, writer string) string {
	refs := make([]string, len(g.Members))
	for i, m := range g.Members {
		refs[i] = fmt.Sprintf("%s:%d", m.ID, m.Version)
	}
	sort.Strings(refs)
	sum := sha256.Sum256([]byte(FormatVersion + "\x1f" + writer + "\x1f" + g.Key + "\x1f" + strings.Join(refs, ",")))
	return hex.EncodeToString(sum[:])
}

func hash8(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// words of the reflection's fixed text, in English and Chinese.
type words struct {
	known, worked, failed, conflicts, open, none, from, votes, newest, earlier, revise, unsure, asks, extractive string
	categories                                                                                                   map[string]string
}

var english = words{
	known: "What is known", worked: "What worked", failed: "What failed or misled", conflicts: "Contradictions",
	open: "Open questions", none: "None recorded.", from: "Written from %d memories (%s).", votes: "%d up, %d down",
	newest: "Newest", earlier: "earlier", revise: "Marked for revision:", unsure: "Low confidence:", asks: "Asked:",
	extractive: "extracted, no model",
}

var chinese = words{
	known: "已知", worked: "有效的做法", failed: "失败或误导", conflicts: "矛盾", open: "待解决的问题",
	none: "暂无记录。", from: "根据 %d 条记忆写成（%s）。", votes: "赞 %d，踩 %d", newest: "最新", earlier: "较早",
	revise: "待修订：", unsure: "置信度低：", asks: "提问：", extractive: "抽取式，未用模型",
	categories: map[string]string{engram.CategoryWork: "工作", engram.CategoryLife: "生活", engram.CategoryPreference: "偏好",
		engram.CategoryEmotion: "情绪", engram.CategoryStrategy: "策略", engram.CategoryKB: "知识库"},
}

func (g Group) words() words {
	if g.chinese() {
		return chinese
	}
	return english
}

// Title names the group: its category, then its subcategory or tag.
func (g Group) Title() string {
	w := g.words()
	cat := g.Category
	if name, ok := w.categories[cat]; ok {
		cat = name
	} else if cat != "" {
		cat = strings.ToUpper(cat[:1]) + cat[1:]
	}
	switch {
	case g.Subcategory != "":
		return cat + " — " + g.Subcategory
	case g.Tag != "":
		return cat + " — #" + g.Tag
	}
	return cat
}

// scored is a member with what the writer ranks it by.
type scored struct {
	m          *engram.Memory
	terms      []string
	centrality float64 // average share of the group holding each of its terms
	quality    float64 // (1 + reward) / 2 × confidence
}

// Extract writes the group's reflection without a model: each section
// lists the members that best fit it, most central and best rated first,
// each claim citing its memory and version. It returns the Markdown and
// the memories cited.
func Extract(g Group) (string, []engram.MemoryRef) {
	w := g.words()
	items := rank(g)
	cited := map[string]*engram.Memory{}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n_%s_\n", escape(g.Title()), fmt.Sprintf(w.from, len(g.Members), w.extractive))
	claim := func(m *engram.Memory) string {
		cited[m.ID] = m
		return claimText(m) + " " + cite(m)
	}
	section := func(title string, lines []string) {
		fmt.Fprintf(&b, "\n## %s\n\n", title)
		if len(lines) == 0 {
			b.WriteString(w.none + "\n")
			return
		}
		for _, l := range lines {
			b.WriteString("- " + l + "\n")
		}
	}

	failed := map[string]bool{}
	var failedLines []string
	for _, it := range top(items, maxPerSection, func(s scored) (float64, bool) {
		m := s.m
		ok := m.NeedsRevision || m.DownCount > m.UpCount || m.Reward < -0.3
		return float64(m.DownCount-m.UpCount) - m.Reward + boolf(m.NeedsRevision), ok
	}) {
		failed[it.m.ID] = true
		failedLines = append(failedLines, claim(it.m)+" ("+fmt.Sprintf(w.votes, it.m.UpCount, it.m.DownCount)+")")
	}
	var known []string
	for _, it := range top(items, maxKnown, func(s scored) (float64, bool) {
		return s.centrality * s.quality, !failed[s.m.ID]
	}) {
		known = append(known, claim(it.m))
	}
	section(w.known, known)

	var worked []string
	for _, it := range top(items, maxPerSection, func(s scored) (float64, bool) {
		m := s.m
		return float64(m.UpCount-m.DownCount) + m.Reward, m.UpCount > m.DownCount && !failed[m.ID]
	}) {
		worked = append(worked, claim(it.m)+" ("+fmt.Sprintf(w.votes, it.m.UpCount, it.m.DownCount)+")")
	}
	section(w.worked, worked)
	section(w.failed, failedLines)

	var conflicts []string
	for _, p := range contradictions(items) {
		conflicts = append(conflicts, fmt.Sprintf("%s: %s; %s: %s", w.newest, claim(p[0]), w.earlier, claim(p[1])))
	}
	section(w.conflicts, conflicts)

	var open []string
	for _, it := range top(items, maxPerSection, func(s scored) (float64, bool) {
		m := s.m
		question := strings.HasSuffix(strings.TrimSpace(m.Content), "?") || strings.HasSuffix(strings.TrimSpace(m.Content), "？")
		return boolf(m.NeedsRevision)*2 + boolf(question) + (1 - m.Confidence), m.NeedsRevision || m.Confidence < 0.35 || question
	}) {
		m := it.m
		prefix := w.asks
		switch {
		case m.NeedsRevision:
			prefix = w.revise
		case m.Confidence < 0.35:
			prefix = w.unsure
		}
		open = append(open, prefix+" "+claim(m))
	}
	section(w.open, open)

	refs := make([]engram.MemoryRef, 0, len(cited))
	for _, m := range cited {
		refs = append(refs, engram.MemoryRef{ID: m.ID, Version: m.Version})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].ID < refs[j].ID })
	return b.String(), refs
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// rank scores every member once: its terms, how central it is to the
// group (the average share of members that hold each of its terms) and
// how well it is rated.
func rank(g Group) []scored {
	df := map[string]int{}
	items := make([]scored, len(g.Members))
	for i, m := range g.Members {
		items[i] = scored{m: m, terms: analysis.UniqueTerms(m.Content + "\n" + m.Summary)}
		for _, t := range items[i].terms {
			df[t]++
		}
	}
	n := float64(len(g.Members))
	for i := range items {
		it := &items[i]
		if len(it.terms) > 0 {
			var sum float64
			for _, t := range it.terms {
				sum += float64(df[t]-1) / math.Max(n-1, 1)
			}
			it.centrality = sum / float64(len(it.terms))
		}
		conf := it.m.Confidence
		if conf <= 0 || conf > 1 {
			conf = 0.5
		}
		it.quality = (1 + math.Max(-1, math.Min(1, it.m.Reward))) / 2 * conf
	}
	return items
}

// top returns up to n items that key accepts, best key first; ties keep
// the older member first.
func top(items []scored, n int, key func(scored) (float64, bool)) []scored {
	type ranked struct {
		s     scored
		order int // position in items: members come oldest first
	}
	h := topk.New(n, func(a, b ranked) bool { return a.order < b.order })
	for i, it := range items {
		if k, ok := key(it); ok {
			h.Push(k, ranked{it, i})
		}
	}
	best := h.Sorted()
	out := make([]scored, len(best))
	for i, r := range best {
		out[i] = r.s
	}
	return out
}

// contradictions pairs members that speak of one subject (their terms
// overlap by at least similarSubject) yet each says something the other
// does not: the newer first, since the newest wins. Only the most central
// members are compared.
func contradictions(items []scored) [][2]*engram.Memory {
	cands := top(items, contradictionCap, func(s scored) (float64, bool) { return s.centrality, len(s.terms) > 0 })
	var out [][2]*engram.Memory
	used := map[string]bool{}
	for i := 0; i < len(cands) && len(out) < maxPerSection; i++ {
		for j := i + 1; j < len(cands) && len(out) < maxPerSection; j++ {
			a, b := cands[i], cands[j]
			if used[a.m.ID] || used[b.m.ID] || a.m.Content == b.m.Content {
				continue
			}
			shared, onlyA, onlyB := analysis.Overlap(a.terms, b.terms)
			if onlyA == 0 || onlyB == 0 || float64(shared)/float64(shared+onlyA+onlyB) < similarSubject {
				continue
			}
			newer, older := a.m, b.m
			if newer.ReinforcedAt.Before(older.ReinforcedAt) || newer.ReinforcedAt.Equal(older.ReinforcedAt) && newer.CreatedAt.Before(older.CreatedAt) {
				newer, older = older, newer
			}
			out = append(out, [2]*engram.Memory{newer, older})
			used[a.m.ID], used[b.m.ID] = true, true
		}
	}
	return out
}

// claimText is what a memory says, in one line: its summary, else its
// content, white space folded, cut at maxClaimRunes, Markdown escaped.
func claimText(m *engram.Memory) string {
	text := m.Summary
	if strings.TrimSpace(text) == "" {
		text = m.Content
	}
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) > maxClaimRunes {
		text = string([]rune(text)[:maxClaimRunes-1]) + "…"
	}
	return escape(text)
}

// cite is a citation the console can follow: the memory's id and version.
func cite(m *engram.Memory) string {
	return fmt.Sprintf("[%s@%d](%s)", m.ID, m.Version, MemoryLink(m.ID))
}

// escape makes text literal in Markdown, inside a line: every mark that
// inline Markdown or HTML could read (emphasis, code, links, images, raw
// HTML, entities, strikethrough, table pipes) is backslash-escaped, so a
// memory holding "<script>" or "**" shows as written.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>!|~&", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
