package bench

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"

	"github.com/engram-memory/engram/internal/gate"
)

//go:embed data/gate/bad_notes.jsonl
var badNotesData []byte

// badNote is one line of data/gate/bad_notes.jsonl: a note the gate should
// refuse, the rule it breaks (kind), its language, its split ("tune" or
// "test", fixed before any tuning) and, for a repeat, the stored memory it
// repeats.
type badNote struct {
	Kind    string `json:"kind"`
	Lang    string `json:"lang"`
	Content string `json:"content"`
	Split   string `json:"split"`
	Stored  string `json:"stored"`
}

// GateCount is how many of N the gate refused, in all and by rule.
type GateCount struct {
	N, Refused int
	ByRule     map[string]int
}

func (c *GateCount) add(v gate.Verdict) {
	c.N++
	if v.Rule != "" {
		c.Refused++
		if c.ByRule == nil {
			c.ByRule = map[string]int{}
		}
		c.ByRule[v.Rule]++
	}
}

// GateSplit is the gate's measure on one split: true LoCoMo turns (all,
// and those a question's evidence names) and the bad notes by kind
// (Caught: by any rule; Own: by the rule of its kind).
type GateSplit struct {
	Name            string
	Turns, Evidence GateCount
	Notes           map[string]*GateCount
	NotesOwn        map[string]int
	Conversations   string
	NotesSplitLabel string
	RefusedExamples []string
}

// RunGate applies the write gate to every LoCoMo turn at path, in
// conversation order (each turn may repeat the turns before it in its
// conversation; the session's date is its context) and to the bad notes,
// on the tuning split (conversations 1–5, notes marked tune) and the
// held-out split (conversations 6–10, notes marked test).
func RunGate(path string) ([]*GateSplit, error) {
	convs, err := loadLoCoMo(path)
	if err != nil {
		return nil, err
	}
	notes, err := loadBadNotes(badNotesData)
	if err != nil {
		return nil, err
	}
	splits := []*GateSplit{
		{Name: "tuning", Conversations: "1-5", NotesSplitLabel: "tune"},
		{Name: "held-out", Conversations: "6-10", NotesSplitLabel: "test"},
	}
	for i, conv := range convs {
		sp := splits[0]
		if i >= 5 {
			sp = splits[1]
		}
		gateConversation(conv, sp)
	}
	for _, sp := range splits {
		sp.Notes, sp.NotesOwn = map[string]*GateCount{}, map[string]int{}
		for _, n := range notes {
			if n.Split != sp.NotesSplitLabel {
				continue
			}
			var stored []gate.Stored
			if n.Stored != "" {
				stored = []gate.Stored{gate.NewStored(n.Stored)}
			}
			v := gate.Check(gate.Note{Content: n.Content}, stored)
			if sp.Notes[n.Kind] == nil {
				sp.Notes[n.Kind] = &GateCount{}
			}
			sp.Notes[n.Kind].add(v)
			if v.Rule == n.Kind {
				sp.NotesOwn[n.Kind]++
			}
		}
	}
	return splits, nil
}

func loadBadNotes(raw []byte) ([]badNote, error) {
	var out []badNote
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for line := 1; sc.Scan(); line++ {
		var n badNote
		if err := json.Unmarshal(sc.Bytes(), &n); err != nil {
			return nil, fmt.Errorf("bad_notes.jsonl:%d: %w", line, err)
		}
		out = append(out, n)
	}
	return out, sc.Err()
}

// gateConversation gates conv's turns in order into sp.
func gateConversation(conv locomoConversation, sp *GateSplit) {
	evidence := map[string]bool{}
	for _, qa := range conv.QA {
		if qa.Category < 1 || qa.Category > 4 {
			continue
		}
		for _, e := range qa.Evidence {
			for _, m := range evidenceRef.FindAllStringSubmatch(e, -1) {
				evidence["D"+m[1]+":"+m[2]] = true
			}
		}
	}
	var stored []gate.Stored
	for _, s := range locomoSessions(conv) {
		for _, t := range s.turns {
			v := gate.Check(gate.Note{Content: t.Text, Context: s.date}, stored)
			sp.Turns.add(v)
			if evidence[t.DiaID] {
				sp.Evidence.add(v)
				if v.Rule != "" && len(sp.RefusedExamples) < 8 {
					sp.RefusedExamples = append(sp.RefusedExamples, v.Rule+": "+t.Text)
				}
			}
			stored = append(stored, gate.NewStored(t.Text))
		}
	}
}

// PrintGate writes the gate's figures.
func PrintGate(w io.Writer, splits []*GateSplit) {
	pct := func(a, b int) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
	}
	rules := func(c GateCount) string {
		s := ""
		for _, r := range gate.Rules {
			s += fmt.Sprintf("  %s %d (%s)", r, c.ByRule[r], pct(c.ByRule[r], c.N))
		}
		return s
	}
	for _, sp := range splits {
		fmt.Fprintf(w, "%s: LoCoMo conversations %s, bad notes marked %q\n", sp.Name, sp.Conversations, sp.NotesSplitLabel)
		fmt.Fprintf(w, "  true turns refused:     %d of %d (%s) by rule:%s\n", sp.Turns.Refused, sp.Turns.N, pct(sp.Turns.Refused, sp.Turns.N), rules(sp.Turns))
		fmt.Fprintf(w, "  evidence turns refused: %d of %d (%s) by rule:%s\n", sp.Evidence.Refused, sp.Evidence.N, pct(sp.Evidence.Refused, sp.Evidence.N), rules(sp.Evidence))
		total, caught, own := 0, 0, 0
		for _, kind := range gate.Rules {
			c := sp.Notes[kind]
			if c == nil {
				continue
			}
			total, caught, own = total+c.N, caught+c.Refused, own+sp.NotesOwn[kind]
			fmt.Fprintf(w, "  bad notes %-14s caught %d of %d (%s), by its own rule %d\n", kind+":", c.Refused, c.N, pct(c.Refused, c.N), sp.NotesOwn[kind])
		}
		fmt.Fprintf(w, "  bad notes all:            caught %d of %d (%s), by its own rule %d\n", caught, total, pct(caught, total), own)
		for _, e := range sp.RefusedExamples {
			fmt.Fprintf(w, "    refused evidence turn: %.100s\n", e)
		}
	}
}
