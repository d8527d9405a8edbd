package router

import (
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// TestTopicVocabularyRoutes: a word of the topic vocabulary alone decides
// the domain, and one listed in both lexicons for a domain counts once.
func TestTopicVocabularyRoutes(t *testing.T) {
	r := New(DefaultConfig())
	for query, want := range map[string]string{
		"when is the hotfix going out":     engram.CategoryWork,
		"猎头推荐的那家怎么样":                       engram.CategoryWork,
		"did we book the rental car":       engram.CategoryLife,
		"丈母娘的体检报告":                         engram.CategoryLife,
		"what cocktails do I order":        engram.CategoryPreference,
		"我喝美式还是拿铁":                         engram.CategoryPreference,
		"why was I so defensive with Lena": engram.CategoryEmotion,
		"那阵子我特别消沉":                         engram.CategoryEmotion,
		"my inbox zero setup":              engram.CategoryStrategy,
		"背单词的妙招":                           engram.CategoryStrategy,
	} {
		if got := r.Route("t", query).Domains[0].Name; got != want {
			t.Errorf("%q routes to %s, want %s", query, got, want)
		}
	}
	if got := domainEvidence(normalize("郁闷"), analysis.Terms("郁闷"))[engram.CategoryEmotion]; got != aspectWeight {
		t.Errorf("郁闷, in both lexicons: emotion evidence %v, want %v", got, aspectWeight)
	}
}

// TestIntentGrammar: a retrospective marker outweighs a question about a
// past act, a request for a proposal is a decision, and a habit of the
// user's own is a fact to look up.
func TestIntentGrammar(t *testing.T) {
	r := New(DefaultConfig())
	for query, want := range map[string]engram.Intent{
		"in retrospect, why did my savings plan stall": engram.IntentReflect,
		"why do I always cancel plans last minute":     engram.IntentReflect,
		"give me a few ideas for the weekend":          engram.IntentDecide,
		"帮我设计一个健身计划":                                   engram.IntentDecide,
		"如何提高写作效率":                                     engram.IntentDecide,
		"accept the counteroffer y/n?":                 engram.IntentDecide,
		"给女儿报哪个兴趣班":                                    engram.IntentDecide,
		"我是不是该原谅他":                                     engram.IntentDecide,
		"我一般怎么安排周末":                                    engram.IntentAsk,
	} {
		if got := r.Route("t", query).Intent; got != want {
			t.Errorf("%q: intent %s, want %s", query, got, want)
		}
	}
}

// TestAspectForms: the grammar of a question about a taste, a feeling or a
// method outweighs the topic words of what it is about.
func TestAspectForms(t *testing.T) {
	r := New(DefaultConfig())
	for query, want := range map[string]string{
		"do I prefer emails or calls":               engram.CategoryPreference,
		"am I ok with pets in the rental":           engram.CategoryPreference,
		"how did I take the news about the layoffs": engram.CategoryEmotion,
		"how do I usually beat jet lag":             engram.CategoryStrategy,
	} {
		if got := r.Route("t", query).Domains[0].Name; got != want {
			t.Errorf("%q routes to %s, want %s", query, got, want)
		}
	}
}
