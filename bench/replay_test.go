package bench

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/learning"
)

// TestReplayFixture replays testdata/replay.jsonl: one held-out question
// whose answer (D1:1, scored 0.30) sits 11th before feedback, under a
// stuffed note (0.5, origin a) and nine turns (0.45 to 0.37, origin b),
// so recall@10 is 0 before and 1 with the note struck out. Six bad
// answers inject the note alone, eight good ones another memory of
// origin b, each by its own rater (weight 1). By hand, with the default
// policy: the tenant's pool is (8 + 1) / (14 + 2) = 0.5625; origin b is
// the main origin (8 judged recalls against a's 6), shrunk by 15 to
// (8 + 15·0.5625) / 23 = 0.7147, origin a to 15·0.5625 / 21 = 0.4018,
// so a's factor is (0.4018 / 0.7147)^6 = 0.0316; the note's own record
// (0 good, 6 bad) shrunk by 3 to a's rate is 1.2054 / 9 = 0.1339, lifted
// 1.5 sd, √(0.1339·0.8661 / 10) = 0.1077, to 0.2955, over a's rate 0.7354;
// its features have 6 judged recalls, under the 12 a feature needs. The
// note's factor is 0.0316 · 0.7354 = 0.0232: it falls to 0.0116, the
// answer comes 10th, recall@10 is 1 and the recovery 1. With origin power
// 0 the factor is 0.7354 alone: the note scores 0.3677, under the ninth
// turn (0.37) but above the answer, which stays 11th: recovery 0.
func TestReplayFixture(t *testing.T) {
	for _, tc := range []struct {
		name            string
		originPower     float64
		after, recovery float64
	}{
		{"default policy", learning.DefaultPolicy().OriginPower, 1, 1},
		{"origin power 0", 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := os.Open("testdata/replay.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p := learning.DefaultPolicy()
			p.OriginPower = tc.originPower
			runs, err := Replay(f, p, learning.DefaultScoreConfig(), engram.DefaultFeedbackConfig())
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 || runs[0].Run != "fixture-" || runs[0].Replayed.Thumbs != 14 {
				t.Fatalf("runs %+v", runs)
			}
			n, before, ceiling, after, recovery := runs[0].Replayed.Recovery(all)
			if n != 1 || before != 0 || ceiling != 1 || after != tc.after || math.Abs(recovery-tc.recovery) > 1e-12 {
				t.Errorf("replayed n %d before %v ceiling %v after %v recovery %v; want 1 0 1 %v %v", n, before, ceiling, after, recovery, tc.after, tc.recovery)
			}
			// The live figure is read from the trace's measurement after
			// feedback, whatever the policy.
			if _, _, _, la, lr := runs[0].Live.Recovery(all); la != 1 || lr != 1 {
				t.Errorf("live after %v recovery %v; want 1 1", la, lr)
			}
			var out bytes.Buffer
			PrintReplay(&out, runs, p)
			if !strings.Contains(out.String(), "| fixture- | all held-out | 1 | 14 | 0.000 | 1.000 | 1.000 | 1.00 |") {
				t.Errorf("report:\n%s", out.String())
			}
		})
	}
}

// TestReplayRejectsBadTraces: a line that is not JSON, an unknown phase,
// a judged recall without its thumb and a question measured after
// feedback but never before are errors naming the line, not figures.
func TestReplayRejectsBadTraces(t *testing.T) {
	for name, trace := range map[string]string{
		"not json":      "{\n",
		"unknown phase": `{"run":"r","tenant":"t","phase":"during","question":0}` + "\n",
		"no thumb":      `{"run":"r","tenant":"t","phase":"train","question":0,"items":[]}` + "\n",
		"after only":    `{"run":"r","tenant":"t","phase":"after","question":3,"items":[]}` + "\n",
	} {
		if _, err := Replay(strings.NewReader(trace), learning.DefaultPolicy(), learning.DefaultScoreConfig(), engram.DefaultFeedbackConfig()); err == nil || !strings.Contains(err.Error(), "trace line 1") {
			t.Errorf("%s: err %v", name, err)
		}
	}
}

// TestReplayCredits: the replay moves what feedback moves besides the
// evidence. The fixture with origin power 0 leaves the note (0.3677 with
// its helpfulness) between the ninth turn and the answer: six down
// credits at the default 2% confidence step take its confidence from 0.5
// to 0.5 · 0.98⁶ = 0.443, 0.3258, still over the answer (0.30); at a
// 20% step to 0.5 · 0.8⁶ = 0.131, 0.0964, and the answer comes 10th. With
// the six bad answers by one rater, a cap of one credit leaves the note
// one bad answer's evidence (under the credible bound, no demotion) and
// its confidence at 0.4, 0.40 with a factor of 1: the answer stays 11th.
func TestReplayCredits(t *testing.T) {
	raw, err := os.ReadFile("testdata/replay.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	oneRater := strings.NewReplacer(`"user-1"`, `"user-0"`, `"user-2"`, `"user-0"`, `"user-3"`, `"user-0"`,
		`"user-4"`, `"user-0"`, `"user-5"`, `"user-0"`).Replace(string(raw))
	for _, tc := range []struct {
		name  string
		trace string
		step  float64
		cap   int
		after float64
	}{
		{"default step", string(raw), 0.02, 3, 0},
		{"20% step", string(raw), 0.2, 3, 1},
		{"one rater, no cap reached", oneRater, 0.2, 10, 1},
		{"one rater, capped at one credit", oneRater, 0.2, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := learning.DefaultPolicy()
			p.OriginPower = 0
			fc := engram.DefaultFeedbackConfig()
			fc.ConfidenceStep, fc.RaterCap = tc.step, tc.cap
			runs, err := Replay(strings.NewReader(tc.trace), p, learning.DefaultScoreConfig(), fc)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, _, after, _ := runs[0].Replayed.Recovery(all); after != tc.after {
				t.Errorf("recall@10 after %v; want %v", after, tc.after)
			}
		})
	}
}
