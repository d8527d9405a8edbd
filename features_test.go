package engram_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
)

// TestMemoryFeatures: the kinds a memory is read to belong to, in
// English and Chinese.
func TestMemoryFeatures(t *testing.T) {
	for _, c := range []struct {
		name string
		m    engram.Memory
		want []string
	}{
		{"keyword list", engram.Memory{Content: "Keywords: tea, milk, sugar, kettle", Type: "note", Category: "life"},
			[]string{"type=note", "shape=list", "len=tiny", "lead1=keywords", "lead2=tea milk", "write=none", "stop=none", "voice=none"}},
		{"keywords without separators", engram.Memory{Content: "Topics mentioned: pottery class painting sunset beach (see later)"},
			[]string{"stop=none", "lead1=topics"}},
		{"speaker's question", engram.Memory{Content: "Caroline: how was the trip to Lisbon?", Tags: []string{"Caroline"},
			Source: []byte(`{"kind":"session","name":"s1"}`)},
			[]string{"shape=question", "write=session", "stop=many", "voice=speaker"}},
		{"template", engram.Memory{Content: "The user's favourite colour is {colour}.", Key: "/user/colour", Source: []byte(`"api:import"`)},
			[]string{"shape=template", "key=user", "write=string:api"}},
		{"Chinese sentence", engram.Memory{Content: "用户喜欢在周末去公园跑步，然后喝一杯咖啡。"},
			[]string{"shape=sentence", "lead1=用", "lead2=用户", "len=short", "stop=many"}},
		{"Chinese keywords", engram.Memory{Content: "关键词：茶，牛奶，糖，水壶，杯子"}, []string{"stop=none", "shape=list"}},
	} {
		got := c.m.Features()
		for _, f := range got {
			if strings.HasPrefix(f, engram.FeaturePrefix+"category=") {
				t.Errorf("%s: features %v name the category", c.name, got)
			}
		}
		for _, w := range c.want {
			if !slices.Contains(got, engram.FeaturePrefix+w) {
				t.Errorf("%s: features %v, want %s", c.name, got, w)
			}
		}
		voiced := slices.Contains(got, engram.FeaturePrefix+"voice=speaker")
		for _, f := range got {
			if strings.HasSuffix(f, "=caroline") {
				t.Errorf("%s: features %v name the speaker", c.name, got)
			}
			if voiced && strings.HasPrefix(f, engram.FeaturePrefix+"lead2=") {
				t.Errorf("%s: features %v read a turn's leading words", c.name, got)
			}
		}
	}
}

// TestWordFeatures: the word-carrying keys forgetting a user erases
// include a turn's leading words, which are no longer a kind but were
// read as one before (a store that learned then holds their evidence).
func TestWordFeatures(t *testing.T) {
	turn := engram.Memory{Content: "John: hey Caroline, the bakery opened", Tags: []string{"John", "bakery"}}
	got := turn.WordFeatures()
	for _, w := range []string{"lead2=hey caroline", "tag=bakery"} {
		if !slices.Contains(got, engram.FeaturePrefix+w) {
			t.Errorf("word features %v, want %s", got, w)
		}
	}
	for _, f := range got {
		if !engram.FeatureHasWords(f) || strings.HasSuffix(f, "=john") {
			t.Errorf("word features %v hold %s", got, f)
		}
	}
	if slices.Contains(turn.Features(), engram.FeaturePrefix+"lead2=hey caroline") {
		t.Errorf("features %v read the turn's leading words", turn.Features())
	}
}
