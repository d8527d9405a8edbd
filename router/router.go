// Package router is the query router: it reads a query's intent (ask,
// decide, reflect), its retrieval mode (factual, exploratory, temporal,
// causal) and its domains, and picks the L2 categories and memory layers a
// recall searches.
//
// It works in Chinese and English from the first request without any model:
// intent, mode and constraints come from the cue tables in lexicon.go, and
// the domains start from a bilingual keyword lexicon. On top of that it
// learns each tenant's own vocabulary from the tenant's labelled L2
// memories (a memory's category is its label) with an incremental
// multinomial naive Bayes over analysis.Terms, so that "Falcon" routes to
// work once the tenant has written about the Falcon migration.
//
// The domain score of category d is
//
//	log prior(d) + w · Σ log P(term | d)
//
// normalised with a softmax. prior(d) ∝ α + the lexicon weight matched for
// d; P(term | d) is Laplace-smoothed over the tenant's vocabulary, terms the
// tenant never wrote are skipped, and w = n / (n + PriorWeight) grows with
// the tenant's n labelled memories, so an empty tenant routes on the priors
// alone. The lexicon plays the part of the class prior: how many memories a
// tenant keeps per category does not bias its routing.
//
// The kb category (external knowledge) is not a domain: no lexicon speaks
// for it and its documents are not learned. A route adds it for ask queries
// in factual or exploratory mode, the ones a knowledge base can answer.
package router

import (
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// MaxQueryRunes caps the part of a query the router reads: a longer query
// (a pasted 100 KB document) is routed on its first MaxQueryRunes runes,
// which say what it is about and keep routing cheap.
const MaxQueryRunes = 2000

// lexiconAlpha is the pseudo-weight every domain gets before the lexicon
// speaks: one matched keyword then gives its domain three times the score
// of each other domain (0.43 against 0.14 of five), a lead that a few of
// the tenant's own memories can overturn.
const lexiconAlpha = 0.5

// reflectStrategyPrior is the strategy evidence a reflect query gets
// before its words speak: a lesson is a strategy when the query names no
// topic ("what mistakes do I keep making"), and half a topic keyword
// yields to any topic it does name. Tuned on labelled.jsonl and
// tuned.jsonl.
const reflectStrategyPrior = 0.5

// Config configures a Router. Zero fields take the DefaultConfig values.
type Config struct {
	// Categories are the L2 categories routes may name, in display order:
	// every one except kb is a scored domain.
	Categories []string
	// Threshold is the score a domain needs to be searched; when even the
	// best domain is below it, the route searches every category.
	Threshold float64
	// MaxCategories caps the scored domains a route searches.
	MaxCategories int
	// PriorWeight is how many labelled memories the priors are worth: with
	// n memories the learned part weighs n / (n + PriorWeight).
	PriorWeight float64
}

// DefaultConfig returns the default categories (kb included), a threshold
// of 0.25, at most three scored domains and priors worth five memories.
func DefaultConfig() Config {
	return Config{
		Categories:    slices.Clone(engram.DefaultCategories),
		Threshold:     0.25,
		MaxCategories: 3,
		PriorWeight:   5,
	}
}

// Router routes queries. It is safe for concurrent use; each tenant has its
// own learned model.
type Router struct {
	cfg     Config
	domains []string // cfg.Categories without kb, in config order

	mu      sync.RWMutex
	tenants map[string]*model
}

// New returns a Router for cfg.
func New(cfg Config) *Router {
	def := DefaultConfig()
	var cats []string
	for _, c := range cfg.Categories {
		if c = strings.TrimSpace(c); c != "" && !slices.Contains(cats, c) {
			cats = append(cats, c)
		}
	}
	if len(cats) == 0 {
		cats = def.Categories
	}
	cfg.Categories = cats
	if cfg.Threshold <= 0 || cfg.Threshold > 1 {
		cfg.Threshold = def.Threshold
	}
	if cfg.MaxCategories <= 0 {
		cfg.MaxCategories = def.MaxCategories
	}
	if cfg.PriorWeight <= 0 {
		cfg.PriorWeight = def.PriorWeight
	}
	r := &Router{cfg: cfg, tenants: map[string]*model{}}
	for _, c := range cats {
		if c != engram.CategoryKB {
			r.domains = append(r.domains, c)
		}
	}
	return r
}

// Route classifies query for tenantID. The categories to search are the
// domains scoring at least Threshold, best first and at most MaxCategories,
// then preference for decide queries and for queries naming a constraint,
// strategy for decide queries, and kb for factual or exploratory asks; when
// no domain reaches Threshold, every configured category. The layers are L2,
// and L3 for reflect. Identity follows the identity rule (identity.go).
// Route accepts any input (an empty or unreadable query
// routes to every category) and reads at most MaxQueryRunes of it.
func (r *Router) Route(tenantID, query string) engram.Route {
	query = truncate(query, MaxQueryRunes)
	text := normalize(query)
	intent := classifyIntent(text)
	mode := engram.ModeFactual
	if intent == engram.IntentReflect {
		mode = engram.ModeExploratory
	}
	mode = classify(text, modeTable, mode, nil)
	domains := r.scoreDomains(tenantID, text, analysis.Terms(query), intent)

	var cats []string
	if len(domains) > 0 && domains[0].Score >= r.cfg.Threshold {
		for _, d := range domains {
			if d.Score < r.cfg.Threshold || len(cats) == r.cfg.MaxCategories {
				break
			}
			cats = append(cats, d.Name)
		}
		add := func(c string) {
			if slices.Contains(r.cfg.Categories, c) && !slices.Contains(cats, c) {
				cats = append(cats, c)
			}
		}
		if intent == engram.IntentDecide || score(text, constraintTable) > 0 {
			add(engram.CategoryPreference)
		}
		if intent == engram.IntentDecide {
			add(engram.CategoryStrategy)
		}
		if intent == engram.IntentAsk && (mode == engram.ModeFactual || mode == engram.ModeExploratory) {
			add(engram.CategoryKB)
		}
	} else {
		cats = slices.Clone(r.cfg.Categories)
	}

	layers := []string{engram.LayerL2}
	if intent == engram.IntentReflect {
		layers = append(layers, engram.LayerL3)
	}
	return engram.Route{Intent: intent, Mode: mode, Domains: domains, Categories: cats, Layers: layers,
		Identity: needsIdentity(text, intent, domains, r.cfg.Threshold)}
}

// Observe learns text as a memory of category for tenantID. Texts in kb or
// in a category that is not configured, and texts without terms, are
// ignored.
func (r *Router) Observe(tenantID, category, text string) {
	r.update(tenantID, category, text, 1)
}

// Forget unlearns a text that Observe learned, for a memory that was
// updated or deleted. Forgetting a text that was never observed changes
// nothing.
func (r *Router) Forget(tenantID, category, text string) {
	r.update(tenantID, category, text, -1)
}

// Drop forgets everything learned for tenantID.
func (r *Router) Drop(tenantID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.tenants, tenantID)
}

func (r *Router) update(tenantID, category, text string, sign int) {
	if !slices.Contains(r.domains, category) {
		return
	}
	terms := learnable(analysis.Terms(text))
	if len(terms) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.tenants[tenantID]
	if m == nil {
		if sign < 0 {
			return
		}
		m = newModel()
		r.tenants[tenantID] = m
	}
	if sign > 0 {
		m.add(category, terms)
	} else {
		m.remove(category, terms)
	}
}

// scoreDomains returns the domain distribution of a query given as its
// normalised text and its terms, best first; ties keep the configured
// order.
func (r *Router) scoreDomains(tenantID, text string, terms []string, intent engram.Intent) []engram.DomainScore {
	if len(r.domains) == 0 {
		return nil
	}
	evidence := domainEvidence(text, terms)
	if intent == engram.IntentReflect {
		evidence[engram.CategoryStrategy] += reflectStrategyPrior
	}
	logits := make([]float64, len(r.domains))
	for i, d := range r.domains {
		logits[i] = math.Log(lexiconAlpha + evidence[d])
	}
	r.mu.RLock()
	if m := r.tenants[tenantID]; m != nil && m.docs > 0 {
		w := float64(m.docs) / (float64(m.docs) + r.cfg.PriorWeight)
		learned := learnable(terms)
		for i, d := range r.domains {
			logits[i] += w * m.logLikelihood(d, learned)
		}
	}
	r.mu.RUnlock()

	top := slices.Max(logits)
	var sum float64
	for i := range logits {
		logits[i] = math.Exp(logits[i] - top)
		sum += logits[i]
	}
	out := make([]engram.DomainScore, len(r.domains))
	for i, d := range r.domains {
		out[i] = engram.DomainScore{Name: d, Score: math.Round(logits[i]/sum*1e4) / 1e4}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}
