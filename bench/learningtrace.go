package bench

import (
	"encoding/json"
	"sort"

	"github.com/engram-memory/engram"
)

// LearningTrace is one line of a learning run's trace: a recall, its
// items best first, and for a judged recall its thumb.
type LearningTrace struct {
	Run      string      `json:"run"`
	Tenant   string      `json:"tenant"`
	Phase    string      `json:"phase"` // before, train, after
	Question int         `json:"question"`
	Gold     []string    `json:"gold"`
	Category int         `json:"category"`
	Items    []TraceItem `json:"items"`
	Up       *bool       `json:"up,omitempty"`
	Rater    string      `json:"rater,omitempty"`
	Held     *TraceItem  `json:"held,omitempty"`
	// Probe is the memory a kind probe chose and left where the model
	// ranked it (see engram.Recall.Probe); one it let in is an item
	// marked Explored.
	Probe *TraceItem `json:"probe,omitempty"`
	// LeftOut are the best candidates the recall left out (see
	// engram.Recall.LeftOut), ranked with Items by the measured recalls.
	LeftOut []TraceItem `json:"left_out,omitempty"`
}

// TraceItem is one recalled memory in a trace line.
type TraceItem struct {
	ID    string  `json:"id"`
	Label string  `json:"label"`
	Score float64 `json:"score"`
	// Help is the helpfulness factor inside Score; Relevance, Reward,
	// Confidence and Revision are four of the others (see
	// engram.ScoreBreakdown). A trace written before Revision was
	// recorded leaves it 0.
	Help       float64 `json:"help"`
	Relevance  float64 `json:"relevance"`
	Reward     float64 `json:"reward"`
	Confidence float64 `json:"confidence"`
	Revision   float64 `json:"revision,omitempty"`
	Tokens     int     `json:"tokens"`
	// Kinds is the feature factor inside Help, with the features that
	// moved it (see engram.ScoreBreakdown.Features).
	Kinds    float64                `json:"kinds"`
	Features []engram.FeatureWeight `json:"features,omitempty"`
	// Origin and Of are the memory's origin key and every feature key it
	// has (engram.Memory.Origin, Features): what the learning adds its
	// evidence to, which engram bench replay needs.
	Origin string   `json:"origin,omitempty"`
	Of     []string `json:"of,omitempty"`
	// Explored marks an item a kind probe let in: its Score and Help
	// leave out Kinds (see engram.ScoreBreakdown.Explored).
	Explored bool `json:"explored,omitempty"`
	// At is the item's place in the recall's injection order
	// (engram.Recall.Items, grouped before scored), from 0.
	At int `json:"at"`
}

// tracer writes a run's trace lines; a nil tracer writes nothing.
type tracer struct {
	enc      *json.Encoder
	run      string
	byMemory map[string]string
	// kinds is each memory's origin key and feature keys.
	kinds map[string]memoryKinds
}

type memoryKinds struct {
	origin   string
	features []string
}

func (t *tracer) item(it engram.RecallItem) TraceItem {
	b := it.Breakdown
	return TraceItem{ID: it.ID, Label: t.byMemory[it.ID], Score: it.Score, Help: b.Helpfulness, Relevance: b.Relevance,
		Reward: b.Reward, Confidence: b.Confidence, Revision: b.Revision, Tokens: it.Tokens, Kinds: b.FeatureFactor, Features: b.Features,
		Origin: t.kinds[it.ID].origin, Of: t.kinds[it.ID].features, Explored: b.Explored}
}

func (t *tracer) write(tenant, phase string, i int, q locomoQuestion, rec *engram.Recall, up *bool, rater string) error {
	if t == nil {
		return nil
	}
	line := LearningTrace{Run: t.run, Tenant: tenant, Phase: phase, Question: i, Category: q.category, Up: up, Rater: rater}
	for g := range q.gold {
		line.Gold = append(line.Gold, g)
	}
	sort.Strings(line.Gold)
	items := make([]TraceItem, len(rec.Items))
	for i, it := range rec.Items {
		items[i] = t.item(it)
		items[i].At = i
	}
	sort.SliceStable(items, func(a, b int) bool { return items[a].Score > items[b].Score })
	line.Items = items
	if rec.HeldBack != nil {
		h := t.item(*rec.HeldBack)
		line.Held = &h
	}
	if rec.Probe != nil {
		p := t.item(*rec.Probe)
		line.Probe = &p
	}
	for _, it := range rec.LeftOut {
		line.LeftOut = append(line.LeftOut, t.item(it))
	}
	return t.enc.Encode(line)
}
