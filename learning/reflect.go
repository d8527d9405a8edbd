package learning

import (
	"context"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// maxReflections is how many reflections one recall may inject.
const maxReflections = 2

// ReflectionType is the type of the candidate a reflection becomes.
const ReflectionType = "reflection"

// citationLink is a reflection's citation: "[mem_…@version](/console/…)".
var citationLink = regexp.MustCompile(`\s*\[mem_[a-z2-7]+@\d+\]\([^)]*\)`)

// reflectionCandidates ranks the tenant's reflections against the query
// (BM25 over their text, the statistics of the tenant's reflections) and
// returns the best as candidates for the L3 layer: each reflection's
// digest as content, a shorter one as summary, relevance as its share of
// the best score, match as the share of the query's weight its text holds
// (as a memory's, over the statistics of the reflections), reward from
// the feedback on recalls that injected it.
// Reflections do not decay: they are rewritten when their group changes.
func (r *Recaller) reflectionCandidates(ctx context.Context, query string) ([]Candidate, error) {
	type doc struct {
		r      *engram.Reflection
		text   string
		terms  map[string]int
		length int
	}
	var docs []doc
	df := map[string]int{}
	err := r.store.EachReflection(ctx, func(refl *engram.Reflection) error {
		d := doc{r: refl, text: digest(refl, 0), terms: map[string]int{}}
		for _, t := range analysis.Terms(d.text) {
			d.terms[t]++
			d.length++
		}
		for t := range d.terms {
			df[t]++
		}
		docs = append(docs, d)
		return nil
	})
	if err != nil || len(docs) == 0 {
		return nil, err
	}
	var avg float64
	for _, d := range docs {
		avg += float64(d.length)
	}
	avg /= float64(len(docs))
	n := float64(len(docs))
	q := analysis.QueryTerms(query)
	idf := func(t string) float64 { return math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5)) }
	weight := 0.0 // of the query, for Match: see engram.LexicalHit.Match
	for _, t := range q {
		weight += idf(t)
	}
	scores := make([]float64, len(docs))
	covered := make([]float64, len(docs))
	for i, d := range docs {
		for _, t := range q {
			tf := float64(d.terms[t])
			if tf == 0 {
				continue
			}
			scores[i] += idf(t) * tf * 2.2 / (tf + 1.2*(0.25+0.75*float64(d.length)/avg))
			covered[i] += idf(t)
		}
	}
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(scores[b], scores[a]) })
	var out []Candidate
	for _, i := range order[:min(maxReflections, len(order))] {
		if scores[i] <= 0 {
			break
		}
		d := docs[i]
		m := &engram.Memory{ID: d.r.ID, Category: d.r.Category, Type: ReflectionType, Content: d.text,
			Summary: digest(d.r, 3), Priority: engram.P0, Confidence: 1, UpCount: d.r.UpCount, DownCount: d.r.DownCount,
			Version: d.r.Version, Valid: true, CreatedAt: d.r.CreatedAt, ReinforcedAt: d.r.CreatedAt, Tags: []string{}}
		m.TokenCount, m.SummaryTokenCount = r.packer.tok.Count(m.Content), r.packer.tok.Count(m.Summary)
		b := r.scorer.Score(m, scores[i]/scores[order[0]])
		b.Match = unit(covered[i] / weight)
		out = append(out, Candidate{Memory: m, Breakdown: b, Group: GroupExperience})
	}
	return out, nil
}

// digest turns a reflection's Markdown into one line of plain text for a
// prompt: its title, then each section's claims without their citation
// links; sections with nothing recorded are left out. With perSection > 0,
// only the first claims of its first section.
func digest(r *engram.Reflection, perSection int) string {
	var b strings.Builder
	b.WriteString(r.Title + ".")
	section, claims := "", 0
	for _, line := range strings.Split(r.Markdown, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "## "):
			if perSection > 0 && section != "" {
				return b.String()
			}
			section, claims = strings.TrimPrefix(line, "## "), 0
		case strings.HasPrefix(line, "- ") && section != "":
			if perSection > 0 && claims == perSection {
				continue
			}
			text := unescape(citationLink.ReplaceAllString(strings.TrimPrefix(line, "- "), ""))
			if claims == 0 {
				b.WriteString(" " + section + ": " + text)
			} else {
				b.WriteString("; " + text)
			}
			claims++
		}
	}
	return b.String()
}

// unescape drops the backslashes that made a claim literal in Markdown.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_[]<>!|~&", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
