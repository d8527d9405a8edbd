package web

import (
	"fmt"

	"github.com/engram-memory/engram"
)

// chart is an inline SVG drawn by the server: rectangles and text in a
// fixed view box that scales with the page. Colours come from the
// stylesheet by class, so the charts need no inline styles.
type chart struct {
	Title string
	// Link is the evidence behind the chart (a console URL), with
	// LinkText its label; "" for none.
	Link, LinkText string
	W, H           int
	Bars           []chartBar
	Texts          []chartText
	Legend         []chartLegend
}

type chartBar struct {
	X, Y, W, H float64
	Class      string
	Tip        string
}

type chartText struct {
	X, Y   float64
	Text   string
	Anchor string
	Class  string
}

type chartLegend struct {
	Class, Text string
}

// hbars draws one horizontal bar per label.
func hbars(title string, labels []string, values []int64) *chart {
	const w, rowH, labelW, valueW = 560, 26, 130, 60
	ch := &chart{Title: title, W: w, H: rowH*len(labels) + 8}
	maxV := int64(1)
	for _, v := range values {
		maxV = max(maxV, v)
	}
	span := float64(w - labelW - valueW)
	for i, l := range labels {
		y := float64(4 + i*rowH)
		bw := span * float64(values[i]) / float64(maxV)
		ch.Bars = append(ch.Bars, chartBar{X: labelW, Y: y + 4, W: max(bw, 1), H: rowH - 10, Class: "bar",
			Tip: fmt.Sprintf("%s: %d", l, values[i])})
		ch.Texts = append(ch.Texts,
			chartText{X: labelW - 8, Y: y + rowH/2 + 4, Text: l, Anchor: "end", Class: "label"},
			chartText{X: labelW + bw + 6, Y: y + rowH/2 + 4, Text: fmt.Sprint(values[i]), Anchor: "start", Class: "value"})
	}
	return ch
}

// votesChart draws up and down feedback per day as paired columns.
func votesChart(title, up, down string, days []engram.DayVotes) *chart {
	const w, h, left, bottom, top = 560, 200, 34, 24, 10
	ch := &chart{Title: title, W: w + 16, H: h, Legend: []chartLegend{{"up", up}, {"down", down}}}
	maxV := int64(1)
	for _, d := range days {
		maxV = max(maxV, d.Up, d.Down)
	}
	plotH := float64(h - bottom - top)
	slot := float64(w-left) / float64(max(len(days), 1))
	colW := max(slot/2-2, 1)
	ch.Texts = append(ch.Texts,
		chartText{X: left - 6, Y: top + 4, Text: fmt.Sprint(maxV), Anchor: "end", Class: "axis"},
		chartText{X: left - 6, Y: float64(h - bottom), Text: "0", Anchor: "end", Class: "axis"})
	ch.Bars = append(ch.Bars, chartBar{X: left, Y: float64(h - bottom), W: float64(w - left), H: 1, Class: "baseline"})
	for i, d := range days {
		x := left + float64(i)*slot + 1
		day := d.Day.Format("01-02")
		for j, v := range []int64{d.Up, d.Down} {
			bh := plotH * float64(v) / float64(maxV)
			class, name := "up", up
			if j == 1 {
				class, name = "down", down
			}
			ch.Bars = append(ch.Bars, chartBar{X: x + float64(j)*(colW+1), Y: float64(h-bottom) - bh, W: colW, H: bh,
				Class: class, Tip: fmt.Sprintf("%s %s: %d", day, name, v)})
		}
		if len(days) <= 8 || i%2 == (len(days)-1)%2 {
			ch.Texts = append(ch.Texts, chartText{X: x + slot/2 - 1, Y: float64(h - 6), Text: day, Anchor: "middle", Class: "axis"})
		}
	}
	return ch
}

// histogram draws the reward distribution over [-1, 1] in ten bins.
func histogram(title string, bins [10]int64) *chart {
	return binned(title, bins, -1, 1, func(lo float64) string {
		switch {
		case lo < -0.2:
			return "down"
		case lo >= 0.2:
			return "up"
		}
		return "bar"
	})
}

// unitHistogram draws a factor's distribution over [0, 1] in ten bins
// (helpfulness): below 0.5 demotes hard.
func unitHistogram(title string, bins [10]int64) *chart {
	return binned(title, bins, 0, 1, func(lo float64) string {
		if lo < 0.5 {
			return "down"
		}
		return "bar"
	})
}

// binned draws ten equal bins over [lo, hi], each coloured by class of
// its lower bound.
func binned(title string, bins [10]int64, lo, hi float64, class func(lo float64) string) *chart {
	const w, h, left, bottom, top = 560, 180, 34, 24, 18
	step := (hi - lo) / 10
	ch := &chart{Title: title, W: w + 16, H: h}
	maxV := int64(1)
	for _, v := range bins {
		maxV = max(maxV, v)
	}
	plotH := float64(h - bottom - top)
	slot := float64(w-left) / 10
	ch.Texts = append(ch.Texts,
		chartText{X: left - 6, Y: top + 4, Text: fmt.Sprint(maxV), Anchor: "end", Class: "axis"},
		chartText{X: left - 6, Y: float64(h - bottom), Text: "0", Anchor: "end", Class: "axis"})
	ch.Bars = append(ch.Bars, chartBar{X: left, Y: float64(h - bottom), W: float64(w - left), H: 1, Class: "baseline"})
	for i, v := range bins {
		from := lo + float64(i)*step
		bh := plotH * float64(v) / float64(maxV)
		ch.Bars = append(ch.Bars, chartBar{X: left + float64(i)*slot + 2, Y: float64(h-bottom) - bh, W: slot - 4, H: bh,
			Class: class(from), Tip: fmt.Sprintf("[%.1f, %.1f): %d", from, from+step, v)})
		if v > 0 {
			ch.Texts = append(ch.Texts, chartText{X: left + float64(i)*slot + slot/2, Y: float64(h-bottom) - bh - 3,
				Text: fmt.Sprint(v), Anchor: "middle", Class: "value"})
		}
	}
	for i := 0; i <= 10; i += 2 {
		ch.Texts = append(ch.Texts, chartText{X: left + float64(i)*slot, Y: float64(h - 6),
			Text: fmt.Sprintf("%.1f", lo+float64(i)*step), Anchor: "middle", Class: "axis"})
	}
	return ch
}

// meter draws tokens used against the budget.
func meter(title string, used, budget int) *chart {
	const w, h = 560, 28
	ch := &chart{Title: title, W: w, H: h}
	ch.Bars = append(ch.Bars, chartBar{X: 0, Y: 4, W: w, H: h - 8, Class: "track"})
	frac := 0.0
	if budget > 0 {
		frac = min(float64(used)/float64(budget), 1)
	}
	ch.Bars = append(ch.Bars, chartBar{X: 0, Y: 4, W: w * frac, H: h - 8, Class: "bar", Tip: fmt.Sprintf("%d / %d", used, budget)})
	return ch
}
