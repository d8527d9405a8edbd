package gate_test

import (
	"testing"

	"github.com/engram-memory/engram/internal/gate"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, content, context string
		stored                 []string
		want                   string
	}{
		// durable
		{"en thanks", "Thanks!", "", nil, gate.Durable},
		{"en greeting", "Hi there, how are you?", "", nil, gate.Durable},
		{"en thanks to a name", "Thank you so much, Melanie!", "", nil, gate.Durable},
		{"zh thanks", "谢谢！", "", nil, gate.Durable},
		{"zh ack", "好的，没问题。", "", nil, gate.Durable},
		{"zh laugh", "哈哈哈", "", nil, gate.Durable},
		// self_contained
		{"en pronoun", "She only eats salmon kibble.", "", nil, gate.SelfContained},
		{"en that needs", "Those need to be renamed before the release.", "", nil, gate.SelfContained},
		{"en yesterday", "We went hiking yesterday.", "", nil, gate.SelfContained},
		{"en yesterday anchored in text", "On 2024-05-07, the day after, we went hiking yesterday.", "", nil, ""},
		{"en yesterday anchored by context", "We went hiking yesterday.", "1:56 pm on 8 May, 2023", nil, ""},
		{"en reaction then statement", "That's great, Mel! I adopted a grey cat called Dumpling.", "", nil, ""},
		{"zh pronoun", "她只吃三文鱼猫粮。", "", nil, gate.SelfContained},
		{"zh yesterday", "昨天用户把会议改到了下午。", "", nil, gate.SelfContained},
		{"zh anchored", "2024年5月8日：昨天用户把会议改到了下午。", "", nil, ""},
		{"zh this one", "这个版本是我们要保留的。", "", nil, gate.SelfContained},
		// specific
		{"en list", "python, golang, rust, docker, kubernetes", "", nil, gate.Specific},
		{"en bare words", "meeting notes budget roadmap hiring", "", nil, gate.Specific},
		{"en hashtags", "#ai #memory #agents #llm", "", nil, gate.Specific},
		{"en stuffing", "bug bug bug bug fix fix fix", "", nil, gate.Specific},
		{"en list in a sentence", "Alice uses python, golang, rust and docker at work.", "", nil, ""},
		{"zh list", "Python、Go、Docker、K8s、微服务", "", nil, gate.Specific},
		{"zh hashtags", "#人工智能 #记忆 #大模型 #智能体", "", nil, gate.Specific},
		{"zh list of sentences", "张三喜欢咖啡，李四喜欢茶，王五喜欢果汁，赵六喜欢可乐", "", nil, ""},
		// repeat
		{"en near duplicate", "Bob is allergic to peanuts and shellfish.", "", []string{"Bob is allergic to shellfish and peanuts."}, gate.Repeat},
		{"en different fact", "Bob is allergic to cats.", "", []string{"Bob is allergic to shellfish and peanuts."}, ""},
		{"en identical is the store's dedup", "Bob is allergic to cats.", "", []string{"Bob is allergic to cats."}, ""},
		{"zh near duplicate", "李四对花生和海鲜过敏。", "", []string{"李四对海鲜和花生过敏。"}, gate.Repeat},
		{"zh different fact", "李四对猫毛过敏。", "", []string{"李四对海鲜和花生过敏。"}, ""},
		// passes
		{"en fact", "Carol's cat Dumpling only eats salmon kibble.", "", nil, ""},
		{"zh fact", "王五的猫叫饺子，只吃三文鱼猫粮。", "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stored []gate.Stored
			for _, s := range tc.stored {
				stored = append(stored, gate.NewStored(s))
			}
			v := gate.Check(gate.Note{Content: tc.content, Context: tc.context}, stored)
			if v.Rule != tc.want {
				t.Errorf("Check(%q) = %q (%s), want %q", tc.content, v.Rule, v.Reason, tc.want)
			}
			if (v.Rule == "") != (v.Reason == "") {
				t.Errorf("Check(%q): rule %q with reason %q", tc.content, v.Rule, v.Reason)
			}
		})
	}
}

func TestSimilarity(t *testing.T) {
	if s := gate.Similarity("Alice likes tea", "Alice likes tea"); s != 1 {
		t.Errorf("same text: %v, want 1", s)
	}
	if s := gate.Similarity("Alice likes tea", "Bob drives trucks"); s != 0 {
		t.Errorf("unrelated: %v, want 0", s)
	}
	if s := gate.Similarity("", "Bob"); s != 0 {
		t.Errorf("empty: %v, want 0", s)
	}
}

func TestQueryTerms(t *testing.T) {
	// Terms are analysed (stemmed): salmon, then dumpl (first of the
	// five-letter ones, before kibbl).
	got := gate.QueryTerms("Dumpling eats salmon kibble", 2)
	if len(got) != 2 || got[0] != "salmon" || got[1] != "dumpl" {
		t.Errorf("QueryTerms = %q, want [salmon dumpl]", got)
	}
}
