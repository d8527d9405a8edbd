package web

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/engram-memory/engram"
)

// featureModel is what the learning page reads of the learned
// helpfulness model over kinds of memory (learning.Feedback).
type featureModel interface {
	LearnedFeatures(ctx context.Context) ([]engram.FeatureWeight, error)
}

// featuresView is the learning page's "learned features" section: the
// kinds of memory the tenant's feedback taught it to distrust (most
// distrusted first) and to trust (most trusted first), and a chart of
// both.
type featuresView struct {
	Distrust, Trust []featureRow
	Chart           *chart
}

// featureRow is one learned feature as the page shows it: its name
// without the key prefix, its weight (the log factor) and the factor it
// applies, e^weight.
type featureRow struct {
	Name      string
	Weight    float64
	Factor    float64
	Good, Bad float64
}

// shownFeatures is how many features each side of the section lists.
const shownFeatures = 10

// learnedFeatures builds the section, nil when the console has no
// feature model to read.
func (c *Console) learnedFeatures(ctx context.Context, p *page) (*featuresView, error) {
	fm, ok := c.cfg.Impacts.(featureModel)
	if !ok {
		return nil, nil
	}
	ws, err := fm.LearnedFeatures(ctx)
	if err != nil {
		return nil, err
	}
	v := &featuresView{}
	row := func(w engram.FeatureWeight) featureRow {
		return featureRow{Name: strings.TrimPrefix(w.Feature, engram.FeaturePrefix), Weight: w.Weight,
			Factor: math.Min(1, math.Exp(w.Weight)), Good: w.Good, Bad: w.Bad}
	}
	for _, w := range ws {
		if w.Weight < 0 && len(v.Distrust) < shownFeatures {
			v.Distrust = append(v.Distrust, row(w))
		}
	}
	for i := len(ws) - 1; i >= 0 && ws[i].Weight > 0 && len(v.Trust) < shownFeatures; i-- {
		v.Trust = append(v.Trust, row(ws[i]))
	}
	if len(v.Distrust)+len(v.Trust) > 0 {
		v.Chart = featureChart(p.T("features.chart"), p.T("features.distrust"), p.T("features.trust"), v.Distrust, v.Trust)
	}
	return v, nil
}

// featureChart draws one bar per feature around a centre line: distrusted
// features (negative weight) to the left, trusted ones to the right, each
// as long as its weight over the largest.
func featureChart(title, distrust, trust string, bad, good []featureRow) *chart {
	const w, rowH, labelW = 560, 22, 190
	rows := append(append([]featureRow(nil), bad...), good...)
	ch := &chart{Title: title, W: w, H: rowH*len(rows) + 8,
		Legend: []chartLegend{{Class: "down", Text: distrust}, {Class: "up", Text: trust}}}
	top := 1e-9
	for _, r := range rows {
		top = math.Max(top, math.Abs(r.Weight))
	}
	mid := float64(labelW) + float64(w-labelW)/2
	half := float64(w-labelW)/2 - 40
	ch.Bars = append(ch.Bars, chartBar{X: mid - 0.5, Y: 0, W: 1, H: float64(ch.H), Class: "baseline"})
	for i, r := range rows {
		y := float64(4 + i*rowH)
		bw := math.Max(half*math.Abs(r.Weight)/top, 1)
		x, class, anchor, tx := mid, "up", "start", mid+bw+4
		if r.Weight < 0 {
			x, class, anchor, tx = mid-bw, "down", "end", mid-bw-4
		}
		ch.Bars = append(ch.Bars, chartBar{X: x, Y: y + 3, W: bw, H: rowH - 8, Class: class,
			Tip: fmt.Sprintf("%s: %+.2f (×%.2f)", r.Name, r.Weight, r.Factor)})
		ch.Texts = append(ch.Texts,
			chartText{X: labelW - 8, Y: y + rowH/2 + 4, Text: r.Name, Anchor: "end", Class: "label"},
			chartText{X: tx, Y: y + rowH/2 + 4, Text: fmt.Sprintf("%+.2f", r.Weight), Anchor: anchor, Class: "value"})
	}
	return ch
}

// featureMessages are the section's strings, English then Chinese; they
// join the console's messages.
var featureMessages = map[string][2]string{
	"features.title": {"Learned features", "学到的特征"},
	"features.help": {"Kinds of memory (type, category, key, tags, length, shape of the text, leading words, how it was written) that judged answers taught the model to distrust or trust. A distrusted kind sinks every memory of it, also those nobody has judged; a trusted kind offsets it.",
		"评价过的回答让模型学会不信任或信任的记忆种类（类型、类别、键、标签、长度、文本形态、开头的词、写入方式）。不受信任的种类会降低其所有记忆的分数，包括从未被评价过的；受信任的种类可以抵消。"},
	"features.chart":    {"Learned feature weights", "学到的特征权重"},
	"features.distrust": {"Distrusted", "不信任"},
	"features.trust":    {"Trusted", "信任"},
	"features.feature":  {"Feature", "特征"},
	"features.weight":   {"Weight", "权重"},
	"features.factor":   {"Factor", "系数"},
	"features.none":     {"No kind of memory stands out yet: the model moves a kind only once its evidence is clear.", "还没有突出的记忆种类：只有证据明确时模型才会调整一个种类。"},
}

func init() {
	for k, v := range featureMessages {
		messages[k] = v
	}
}
