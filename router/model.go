package router

import "math"

// model is one tenant's multinomial naive Bayes: term counts per category.
type model struct {
	docs   int                       // labelled documents
	tokens map[string]int            // term occurrences per category
	counts map[string]map[string]int // term → category → occurrences
}

func newModel() *model {
	return &model{tokens: map[string]int{}, counts: map[string]map[string]int{}}
}

func (m *model) add(category string, terms []string) {
	m.docs++
	for _, t := range terms {
		byCat := m.counts[t]
		if byCat == nil {
			byCat = map[string]int{}
			m.counts[t] = byCat
		}
		byCat[category]++
		m.tokens[category]++
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
		if m.counts[t][category] < n {
			return
		}
	}
	m.docs--
	for t, n := range need {
		byCat := m.counts[t]
		if byCat[category] -= n; byCat[category] == 0 {
			delete(byCat, category)
			if len(byCat) == 0 {
				delete(m.counts, t)
			}
		}
		if m.tokens[category] -= n; m.tokens[category] == 0 {
			delete(m.tokens, category)
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
	vocab := float64(len(m.counts))
	denom := math.Log(float64(m.tokens[category]) + vocab)
	var ll float64
	for _, t := range terms {
		if byCat, ok := m.counts[t]; ok {
			ll += math.Log(float64(byCat[category])+1) - denom
		}
	}
	return ll
}
