package web

import (
	"strconv"

	"github.com/engram-memory/engram"
)

// factor is one multiplicative factor of a recall score, as a breakdown
// shows it.
type factor struct {
	Key   string // message key of its name
	Value float64
	Raw   string // the value in full precision, for the page's data-value
	Note  string // what it stands for, translated (may be "")
	Link  string // evidence, a console URL (may be "")
}

// breakdownView is the "breakdown" partial's data: every factor of
// learning's recall score, in the order the score multiplies them
// (relevance × reward × confidence × retention × revision × superseded ×
// emotion × helpfulness, × speaker when the speaker-aware read damped the
// memory), and the score they multiply to.
type breakdownView struct {
	P        *page
	Factors  []factor
	Score    float64
	RawScore string
	// Match is shown aside: it is what the relevance cut compares, not a
	// factor.
	Match float64
}

// breakdownOf lists b's factors for page p. The product of the factors is
// the score: a test multiplies the data-value attributes of the page.
func breakdownOf(p *page, b engram.ScoreBreakdown) breakdownView {
	raw := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	fs := []factor{
		{Key: "factor.relevance", Value: b.Relevance},
		{Key: "factor.reward", Value: b.Reward},
		{Key: "factor.confidence", Value: b.Confidence},
		{Key: "factor.retention", Value: b.Retention, Note: p.Tf("factor.age", f2(b.AgeDays), f2(b.Stability))},
		{Key: "factor.revision", Value: b.Revision},
		{Key: "factor.superseded", Value: b.Superseded, Note: b.Subject},
		{Key: "factor.emotion", Value: emotionFactor(b.Emotion), Note: p.Tf("factor.emotion.note", f2(engram.EmotionTieBreak))},
		{Key: "factor.helpfulness", Value: b.Helpfulness, Note: p.Tf("factor.help.note", f2(b.HelpGood), f2(b.HelpBad), f3(b.OriginFactor))},
	}
	if b.SupersededBy != "" {
		fs[5].Link = "/console/memories/" + b.SupersededBy
	}
	if b.Speaker != 0 {
		fs = append(fs, factor{Key: "factor.speaker", Value: b.Speaker, Note: p.T("factor.speaker.note")})
	}
	for i := range fs {
		fs[i].Raw = raw(fs[i].Value)
	}
	return breakdownView{Factors: fs, Score: b.Score, RawScore: raw(b.Score), Match: b.Match}
}

// emotionFactor is the breakdown's emotion factor; a recall recorded
// before the factor existed carries 0, which multiplies as 1.
func emotionFactor(e float64) float64 {
	if e == 0 {
		return 1
	}
	return e
}
