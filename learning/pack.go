package learning

import (
	"cmp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/engram-memory/engram"
)

// The injection groups of DESIGN §3 (Pack), in the order Pack injects them.
const (
	// GroupContext holds what is injected as context whatever the query
	// (pinned identity memories, Breakdown.Pinned): it goes first, as the
	// frame the rest is read in.
	GroupContext = iota
	// GroupPreference holds the preferences and constraints the answer
	// must respect; they go first so a tight budget keeps them.
	GroupPreference
	// GroupStrategy holds strategies that feedback says work.
	GroupStrategy
	// GroupExperience holds everything else: recent relevant experience.
	GroupExperience
)

// highReward is the reward factor from which a strategy counts as proven:
// at or above the Beta(1, 1) prior mean, so an unrated strategy qualifies
// and one with more downs than ups does not.
const highReward = 0.5

// foldSlack bounds how far the token count stored at write time may exceed
// the count of the rendered line. Rendering only adds a bullet and folds
// white space, which saves at most about half of the tokens of the most
// line-break-heavy text; a text stored at more than foldSlack times the
// room left is skipped uncounted, since counting a long memory costs far
// more than the rest of Pack. Only a text made mostly of blank lines can
// be skipped that would have fit; none can break the budget.
const foldSlack = 4

// Candidate is a scored memory waiting to be packed.
type Candidate struct {
	Memory    *engram.Memory
	Breakdown engram.ScoreBreakdown
	// Group is the injection group; lower groups are packed first.
	Group int
	// unproven is the feature factor the kinds' evidence alone gives
	// (Scorer.Unproven), read with the helpfulness; 0 when not read.
	unproven float64
}

// InjectionGroup returns the group m is injected in: GroupContext for
// pinned context (b.Pinned), GroupPreference for preferences and
// constraints, GroupStrategy for strategies whose reward factor in b is at
// least 0.5, GroupExperience for the rest. Only memories that pass the
// relevance cut are injected at all (see Recaller.cut), so a preference
// goes first only when it matches.
func InjectionGroup(m *engram.Memory, b engram.ScoreBreakdown) int {
	switch {
	case b.Pinned:
		return GroupContext
	case m.Category == engram.CategoryPreference,
		strings.EqualFold(m.Type, "constraint"), strings.EqualFold(m.Type, "preference"):
		return GroupPreference
	case m.Category == engram.CategoryStrategy && b.Reward >= highReward:
		return GroupStrategy
	default:
		return GroupExperience
	}
}

// LineFunc renders the bullet line of a memory, given the text chosen for
// it: the content, or the summary when the content does not fit. The line
// must not contain a newline, since lines are joined with one.
type LineFunc func(m *engram.Memory, text string) string

// RecallLine renders "- text", with every run of white space (newlines,
// carriage returns and tabs included) folded to one space, so that a
// memory stays one bullet. A memory of something that happened at a known
// time (an episode's OccurredAt) shows its date first, "- [2023-05-08]
// text", so that a model can answer when it happened.
func RecallLine(m *engram.Memory, text string) string {
	if m != nil && m.OccurredAt != nil {
		return "- [" + m.OccurredAt.UTC().Format(time.DateOnly) + "] " + fold(text)
	}
	return "- " + fold(text)
}

// ContextLine renders the /v1/context read-block line "- key type text":
// the memory's key (its id when it has none), its type (its category when
// it has none), then the text, each folded to one line.
func ContextLine(m *engram.Memory, text string) string {
	name := m.Key
	if name == "" {
		name = m.ID
	}
	kind := m.Type
	if kind == "" {
		kind = m.Category
	}
	var b strings.Builder
	b.WriteString("-")
	for _, part := range [...]string{name, kind, text} {
		if part = fold(part); part != "" {
			b.WriteByte(' ')
			b.WriteString(part)
		}
	}
	return b.String()
}

// fold trims s and replaces every run of white space in it by one space.
func fold(s string) string {
	s = strings.TrimSpace(s)
	clean := true
	prevSpace := false
	for _, r := range s {
		space := unicode.IsSpace(r)
		if space && (r != ' ' || prevSpace) {
			clean = false
			break
		}
		prevSpace = space
	}
	if clean {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// Packer renders candidates into a context that fits a token budget.
// It is safe for concurrent use if its TokenCounter is.
type Packer struct {
	tok          engram.TokenCounter
	header       string
	headerTokens int
	sepTokens    int // tokens of the "\n" that joins two lines
}

// NewPacker returns a Packer that counts with tok and puts header (e.g.
// "[Agent Memory]") on the first line of every context; an empty header
// leaves that line out.
func NewPacker(tok engram.TokenCounter, header string) *Packer {
	return &Packer{
		tok:          tok,
		header:       header,
		headerTokens: tok.Count(header),
		sepTokens:    tok.Count("\n"),
	}
}

// packed is one candidate that won a place in the context.
type packed struct {
	cand        *Candidate
	text, line  string
	tokens      int
	usedSummary bool
}

// Pack chooses, in order, the candidates that fit budget tokens and renders
// them with line under the header, one line each. Candidates go by Group,
// then by Breakdown.Score, highest first; ties keep their order. Each gets
// its content, or its summary when only that fits, or is skipped, since a
// later and smaller one may still fit. A memory id seen twice is packed
// once. The token counts stored in the memory (0 when unknown) only serve
// to skip texts far too long to fit without counting them (see foldSlack);
// every packed line is counted.
//
// The context never exceeds budget when re-counted as a whole: lines are
// counted one by one while packing, but BPE tokens can merge across a
// line break, so the whole text is counted at the end and the last line
// dropped until it fits. When nothing fits, Pack returns "", nil, 0. A nil
// line means RecallLine.
func (p *Packer) Pack(cands []Candidate, budget int, line LineFunc) (context string, items []engram.RecallItem, tokensUsed int) {
	if line == nil {
		line = RecallLine
	}
	order := make([]*Candidate, 0, len(cands))
	for i := range cands {
		if cands[i].Memory != nil {
			order = append(order, &cands[i])
		}
	}
	slices.SortStableFunc(order, func(a, b *Candidate) int {
		if c := cmp.Compare(a.Group, b.Group); c != 0 {
			return c
		}
		return cmp.Compare(b.Breakdown.Score, a.Breakdown.Score)
	})

	used, sep := 0, 0
	if p.header != "" {
		used, sep = p.headerTokens, p.sepTokens
	}
	var out []packed
	seen := make(map[string]bool, len(order))
	for _, c := range order {
		// Every line costs at least one token besides its separator.
		if budget-used < sep+1 {
			break
		}
		m := c.Memory
		if m.ID != "" && seen[m.ID] {
			continue
		}
		for _, opt := range [...]struct {
			text    string
			stored  int
			summary bool
		}{{m.Content, m.TokenCount, false}, {m.Summary, m.SummaryTokenCount, true}} {
			if strings.TrimSpace(opt.text) == "" || opt.summary && opt.text == m.Content {
				continue
			}
			if opt.stored > foldSlack*(budget-used-sep) {
				continue
			}
			l := line(m, opt.text)
			if l == "" {
				continue
			}
			n := p.tok.Count(l)
			if used+sep+n > budget {
				continue
			}
			out = append(out, packed{cand: c, text: opt.text, line: l, tokens: n, usedSummary: opt.summary})
			used += sep + n
			sep = p.sepTokens
			seen[m.ID] = true
			break
		}
	}

	for ; len(out) > 0; out = out[:len(out)-1] {
		context = p.render(out)
		if tokensUsed = p.tok.Count(context); tokensUsed <= budget {
			break
		}
	}
	if len(out) == 0 {
		return "", nil, 0
	}
	items = make([]engram.RecallItem, len(out))
	for i, o := range out {
		m := o.cand.Memory
		items[i] = engram.RecallItem{
			ID:          m.ID,
			Key:         m.Key,
			Category:    m.Category,
			Version:     m.Version,
			Text:        o.text,
			Tokens:      o.tokens,
			UsedSummary: o.usedSummary,
			Score:       o.cand.Breakdown.Score,
			Breakdown:   o.cand.Breakdown,
			Via:         o.cand.Breakdown.Via,
			Concept:     o.cand.Breakdown.Concept,
		}
	}
	return context, items, tokensUsed
}

// render joins the header and the lines of out with newlines.
func (p *Packer) render(out []packed) string {
	n := len(p.header)
	for _, o := range out {
		n += 1 + len(o.line)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(p.header)
	for i, o := range out {
		if i > 0 || p.header != "" {
			b.WriteByte('\n')
		}
		b.WriteString(o.line)
	}
	return b.String()
}
