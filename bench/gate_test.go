package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/gate"
)

const gateSample = `[{
 "sample_id": "conv-G",
 "conversation": {
  "session_1_date_time": "1:56 pm on 8 May, 2023",
  "session_1": [
   {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a greyhound called Comet."},
   {"speaker": "Bob", "dia_id": "D1:2", "text": "Thanks!"},
   {"speaker": "Ann", "dia_id": "D1:3", "text": "She loves the park by the river."},
   {"speaker": "Ann", "dia_id": "D1:4", "text": "I adopted a greyhound, called Comet!"},
   {"speaker": "Bob", "dia_id": "D1:5", "text": "Yesterday I started pottery classes."}
  ]
 },
 "qa": [
  {"question": "What is Ann's dog called?", "evidence": ["D1:1"], "category": 4},
  {"question": "Where does Comet like to go?", "evidence": ["D1:3"], "category": 1},
  {"question": "What did Bob start?", "evidence": ["D1:5"], "category": 2}
 ]
}]`

func TestRunGate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locomo.json")
	if err := os.WriteFile(path, []byte(gateSample), 0o600); err != nil {
		t.Fatal(err)
	}
	splits, err := RunGate(path)
	if err != nil {
		t.Fatal(err)
	}
	tune, held := splits[0], splits[1]
	// Thanks! is small talk, "She" dangles, D1:4 repeats D1:1; the
	// session date anchors "Yesterday".
	want := map[string]int{gate.Durable: 1, gate.SelfContained: 1, gate.Repeat: 1}
	if tune.Turns.N != 5 || tune.Turns.Refused != 3 || len(tune.Turns.ByRule) != 3 {
		t.Errorf("tuning turns = %+v, want 3 of 5 refused, %v", tune.Turns, want)
	}
	for r, n := range want {
		if tune.Turns.ByRule[r] != n {
			t.Errorf("tuning turns by %s = %d, want %d", r, tune.Turns.ByRule[r], n)
		}
	}
	if tune.Evidence.N != 3 || tune.Evidence.Refused != 1 || tune.Evidence.ByRule[gate.SelfContained] != 1 {
		t.Errorf("evidence turns = %+v, want 1 of 3 refused as self_contained", tune.Evidence)
	}
	if held.Turns.N != 0 {
		t.Errorf("held-out turns = %d, want 0 (one conversation)", held.Turns.N)
	}
	for _, sp := range splits {
		for _, kind := range gate.Rules {
			if c := sp.Notes[kind]; c == nil || c.N != 10 {
				t.Errorf("%s: bad notes of kind %s = %+v, want 10", sp.Name, kind, c)
			}
		}
	}
	var out bytes.Buffer
	PrintGate(&out, splits)
	if !strings.Contains(out.String(), "true turns refused:     3 of 5 (60.0%)") {
		t.Errorf("PrintGate does not report 3 of 5 refused:\n%s", out.String())
	}
}
