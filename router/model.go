package router

import "math"

// model is one tenant's multinomial naive Bayes: term counts per category.
// The counts are one flat map keyed by term and category rather than a
// map per term: a tenant of a hundred memories holds a thousand terms or
// more, and a map per term cost a few hundred bytes each. The keys'
// categories are interned (cats), so that they hold one copy of each name.
type model struct {
	docs   int               // labelled documents
	tokens map[string]int    // term occurrences per category
	cats   map[string]string // each category's one copy
	vocab  map[string]int    // term → categories it occurs in
	counts map[termCat]int   // occurrences of a term in a category
}

type termCat struct {
	term string
	cat  string
}

func newModel() *model {
	return &model{tokens: map[string]int{}, cats: map[string]string{}, vocab: map[string]int{}, counts: map[termCat]int{}}
}

// cat returns the model's copy of category, keeping it if new.
func (m *model) cat(category string) string {
	c, ok := m.cats[category]
	if !ok {
		c = category
		m.cats[c] = c
	}
	return c
}

func (m *model) add(category string, terms []string) {
	m.docs++
	c := category
	if len(terms) > 0 {
		c = m.cat(category)
	}
	for _, t := range terms {
		k := termCat{t, c}
		n := m.counts[k]
		if n == 0 {
			m.vocab[t]++
		}
		m.counts[k] = n + 1
	}
	if len(terms) > 0 {
		m.tokens[c] += len(terms)
	}
}

// remove undoes add. A text that cannot have been added to category (one of
// its terms is missing there) changes nothing.
func (m *model) remove(category string, terms []string) {
	need := map[string]int{}
	for _, t := range terms {
		need[t]++
	}
	for t, n := range need {
		if m.counts[termCat{t, category}] < n {
			return
		}
	}
	m.docs--
	for t, n := range need {
		k := termCat{t, category}
		if m.counts[k] -= n; m.counts[k] == 0 {
			delete(m.counts, k)
			if m.vocab[t]--; m.vocab[t] == 0 {
				delete(m.vocab, t)
			}
		}
		if m.tokens[category] -= n; m.tokens[category] == 0 {
			delete(m.tokens, category)
			delete(m.cats, category)
		}
	}
}

// learnable returns the terms that may speak for a domain. The terms of the
// intent and mode cues ("why", 什么时候) and Chinese function words (什么,
// 一下) say how a query asks, not what about; counted, they would tie a
// question form to whichever category happened to use it first.
func learnable(terms []string) []string {
	out := make([]string, 0, len(terms))
	for _, t := range terms {
		if !neutralTerms[t] {
			out = append(out, t)
		}
	}
	return out
}

// logLikelihood is Σ log P(t | category) over the terms the tenant knows,
// with add-one smoothing over its vocabulary.
func (m *model) logLikelihood(category string, terms []string) float64 {
	vocab := float64(len(m.vocab))
	denom := math.Log(float64(m.tokens[category]) + vocab)
	var ll float64
	for _, t := range terms {
		if m.vocab[t] > 0 {
			ll += math.Log(float64(m.counts[termCat{t, category}])+1) - denom
		}
	}
	return ll
}
