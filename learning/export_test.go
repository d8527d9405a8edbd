package learning

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
)

// updateGolden regenerates testdata/export/*.jsonl:
//
//	go test -run Export ./learning/ -update
var updateGolden = flag.Bool("update", false, "rewrite the export golden files in testdata/export")

var exportTime = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// exportPairs covers the cases the golden files pin down. The provenance
// fields are filled in to show that none of them leaks into a line.
func exportPairs() []*engram.Pair {
	chat := []engram.Message{
		{Role: "system", Content: "You are a concise travel assistant."},
		{Role: "user", Content: "I'm flying to Tokyo in April."},
		{Role: "assistant", Content: "Nice, cherry blossom season! How can I help?"},
		{Role: "user", Content: "Which airport is closer to Shibuya?"},
	}
	return []*engram.Pair{
		{
			ID: "pair-1", Kind: engram.PairRegeneration,
			Prompt:                "What is the capital of Australia?",
			Chosen:                "The capital of Australia is Canberra.",
			Rejected:              "The capital of Australia is Sydney.",
			Margin:                2,
			ChosenInteractionID:   "int-1b",
			RejectedInteractionID: "int-1a",
			FeedbackIDs:           []string{"fb-1", "fb-2"},
			ChosenMemories:        []engram.MemoryRef{{ID: "mem-1", Version: 3}},
			RejectedMemories:      []engram.MemoryRef{{ID: "mem-1", Version: 3}},
			CreatedAt:             exportTime,
		},
		{
			ID: "pair-2", Kind: engram.PairRating,
			Prompt:                "记住：我喜欢喝咖啡，不加糖。",
			Chosen:                "好的，记住了：您喜欢喝咖啡，不加糖 ☕👍",
			Rejected:              "好的，下次给您的咖啡加两块糖 🍬",
			Margin:                1.5,
			ChosenInteractionID:   "int-2b",
			RejectedInteractionID: "int-2a",
			CreatedAt:             exportTime,
		},
		{
			ID: "pair-3", Kind: engram.PairRegeneration,
			Prompt:                "Show me how to say \"hi\" in HTML & JS.",
			Chosen:                "Use <p>hi</p>; in JS:\n\tconsole.log(\"hi\") // path C:\\web\\hi.js",
			Rejected:              "<script>alert('hi')</script> & \"done\"\\",
			Margin:                2,
			ChosenInteractionID:   "int-3b",
			RejectedInteractionID: "int-3a",
			CreatedAt:             exportTime,
		},
		{
			ID: "pair-4", Kind: engram.PairRating,
			Prompt: "system: You are a concise travel assistant.\n" +
				"user: I'm flying to Tokyo in April.\n" +
				"assistant: Nice, cherry blossom season! How can I help?\n" +
				"user: Which airport is closer to Shibuya?",
			Messages:              chat,
			Chosen:                "Haneda (HND): about 30 minutes to Shibuya.",
			Rejected:              "Narita (NRT) is closer.",
			Margin:                1,
			ChosenInteractionID:   "int-4b",
			RejectedInteractionID: "int-4a",
			CreatedAt:             exportTime,
		},
		{
			ID: "pair-5", Kind: engram.PairCorrection,
			Prompt:                "Convert 100 °F to Celsius.",
			Chosen:                "100 °F is about 37.8 °C.",
			Rejected:              "100 °F is 212 °C.",
			Margin:                2,
			RejectedInteractionID: "int-5a",
			FeedbackIDs:           []string{"fb-5"},
			CreatedAt:             exportTime,
		},
	}
}

// exportUnpaired covers both labels, a text prompt and a chat prompt.
func exportUnpaired() []*engram.Unpaired {
	return []*engram.Unpaired{
		{
			Prompt:     "What is the capital of Australia?",
			Completion: "The capital of Australia is Canberra.",
			Label:      true,
			CreatedAt:  exportTime,
		},
		{
			Prompt:     "我喜欢喝咖啡，不加糖。推荐一杯？",
			Completion: "来一杯焦糖玛奇朵吧 🍮\n\"超甜\" <b>推荐</b>",
			Label:      false,
			CreatedAt:  exportTime,
		},
		{
			Prompt: "system: Answer in one word.\nuser: Opposite of hot?",
			Messages: []engram.Message{
				{Role: "system", Content: "Answer in one word."},
				{Role: "user", Content: "Opposite of hot?"},
			},
			Completion: "Cold.",
			Label:      true,
			CreatedAt:  exportTime,
		},
	}
}

var exportFormats = []Format{FormatTRL, FormatTRLConversational, FormatTRLUnpaired, FormatOpenAI}

// encodeExport encodes the fixture matching f: pairs for a paired
// format, unpaired examples otherwise.
func encodeExport(t *testing.T, f Format) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := NewEncoder(&buf, f)
	if f.Paired() {
		for _, p := range exportPairs() {
			if err := enc.Pair(p); err != nil {
				t.Fatalf("Pair(%s): %v", p.ID, err)
			}
		}
	} else {
		for i, u := range exportUnpaired() {
			if err := enc.Unpaired(u); err != nil {
				t.Fatalf("Unpaired(%d): %v", i, err)
			}
		}
	}
	return buf.Bytes()
}

func TestExportGolden(t *testing.T) {
	for _, f := range exportFormats {
		t.Run(string(f), func(t *testing.T) {
			got := encodeExport(t, f)
			path := filepath.Join("testdata", "export", string(f)+".jsonl")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if bytes.Equal(got, want) {
				return
			}
			gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
			for i := range max(len(gl), len(wl)) {
				var g, w string
				if i < len(gl) {
					g = gl[i]
				}
				if i < len(wl) {
					w = wl[i]
				}
				if g != w {
					t.Fatalf("%s line %d differs:\n got %s\nwant %s", path, i+1, g, w)
				}
			}
			t.Fatalf("%s differs", path)
		})
	}
}

// exportLines splits encoder output into lines, checking that it is
// "\n"-terminated and has one line per example.
func exportLines(t *testing.T, out []byte, n int) [][]byte {
	t.Helper()
	if !bytes.HasSuffix(out, []byte("\n")) {
		t.Fatalf("output does not end in a newline: %q", out)
	}
	lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	return lines
}

// keysOf decodes a JSON object and returns its keys, sorted.
func keysOf(t *testing.T, raw []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, raw)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkKeys fails unless raw is an object with exactly the keys want.
func checkKeys(t *testing.T, what string, raw []byte, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := keysOf(t, raw); !slices.Equal(got, want) {
		t.Fatalf("%s keys %v, want %v: %s", what, got, want, raw)
	}
}

// checkMessages fails unless raw is a list of objects with exactly the
// keys role and content, and returns the decoded list.
func checkMessages(t *testing.T, what string, raw json.RawMessage) []message {
	t.Helper()
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		t.Fatalf("%s is not a list: %v: %s", what, err, raw)
	}
	msgs := make([]message, len(items))
	for i, it := range items {
		checkKeys(t, fmt.Sprintf("%s[%d]", what, i), it, "role", "content")
		if err := json.Unmarshal(it, &msgs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return msgs
}

// wantPrompt is the chat prompt a pair or example should export as.
func wantPrompt(text string, msgs []engram.Message) []message {
	if len(msgs) == 0 {
		return []message{{Role: "user", Content: text}}
	}
	out := make([]message, len(msgs))
	for i, m := range msgs {
		out[i] = message{Role: m.Role, Content: m.Content}
	}
	return out
}

func assistantOnly(content string) []message {
	return []message{{Role: "assistant", Content: content}}
}

// TestExportShapes parses every line back and checks its exact key set
// and that the values round-trip, independently of the golden files.
func TestExportShapes(t *testing.T) {
	pairs := exportPairs()
	for _, f := range []Format{FormatTRL, FormatTRLConversational, FormatOpenAI} {
		t.Run(string(f), func(t *testing.T) {
			for i, line := range exportLines(t, encodeExport(t, f), len(pairs)) {
				p := pairs[i]
				var m map[string]json.RawMessage
				if err := json.Unmarshal(line, &m); err != nil {
					t.Fatal(err)
				}
				switch f {
				case FormatTRL:
					checkKeys(t, p.ID, line, "prompt", "chosen", "rejected")
					var got trlLine
					if err := json.Unmarshal(line, &got); err != nil {
						t.Fatal(err)
					}
					if want := (trlLine{p.Prompt, p.Chosen, p.Rejected}); got != want {
						t.Fatalf("%s: got %+v, want %+v", p.ID, got, want)
					}
				case FormatTRLConversational:
					checkKeys(t, p.ID, line, "prompt", "chosen", "rejected")
					if got, want := checkMessages(t, p.ID+".prompt", m["prompt"]), wantPrompt(p.Prompt, p.Messages); !slices.Equal(got, want) {
						t.Fatalf("%s prompt %+v, want %+v", p.ID, got, want)
					}
					if got := checkMessages(t, p.ID+".chosen", m["chosen"]); !slices.Equal(got, assistantOnly(p.Chosen)) {
						t.Fatalf("%s chosen %+v", p.ID, got)
					}
					if got := checkMessages(t, p.ID+".rejected", m["rejected"]); !slices.Equal(got, assistantOnly(p.Rejected)) {
						t.Fatalf("%s rejected %+v", p.ID, got)
					}
				case FormatOpenAI:
					checkKeys(t, p.ID, line, "input", "preferred_output", "non_preferred_output")
					checkKeys(t, p.ID+".input", m["input"], "messages")
					var in map[string]json.RawMessage
					if err := json.Unmarshal(m["input"], &in); err != nil {
						t.Fatal(err)
					}
					if got, want := checkMessages(t, p.ID+".input.messages", in["messages"]), wantPrompt(p.Prompt, p.Messages); !slices.Equal(got, want) {
						t.Fatalf("%s messages %+v, want %+v", p.ID, got, want)
					}
					if got := checkMessages(t, p.ID+".preferred_output", m["preferred_output"]); !slices.Equal(got, assistantOnly(p.Chosen)) {
						t.Fatalf("%s preferred_output %+v", p.ID, got)
					}
					if got := checkMessages(t, p.ID+".non_preferred_output", m["non_preferred_output"]); !slices.Equal(got, assistantOnly(p.Rejected)) {
						t.Fatalf("%s non_preferred_output %+v", p.ID, got)
					}
				}
			}
		})
	}
	t.Run(string(FormatTRLUnpaired), func(t *testing.T) {
		us := exportUnpaired()
		for i, line := range exportLines(t, encodeExport(t, FormatTRLUnpaired), len(us)) {
			checkKeys(t, fmt.Sprint("unpaired ", i), line, "prompt", "completion", "label")
			var got trlUnpairedLine
			if err := json.Unmarshal(line, &got); err != nil {
				t.Fatal(err)
			}
			if want := (trlUnpairedLine{us[i].Prompt, us[i].Completion, us[i].Label}); got != want {
				t.Fatalf("unpaired %d: got %+v, want %+v", i, got, want)
			}
		}
	})
}

// TestExportLiteralText checks that HTML-significant characters and
// Chinese are written as themselves, not as \u escapes.
func TestExportLiteralText(t *testing.T) {
	for _, f := range exportFormats {
		out := string(encodeExport(t, f))
		if strings.Contains(out, `\u`) {
			t.Errorf("%s: output has \\u escapes:\n%s", f, out)
		}
	}
	out := string(encodeExport(t, FormatTRL))
	for _, s := range []string{"<script>", "&", "我喜欢喝咖啡，不加糖", "☕👍", `\"hi\"`, `\n\t`, `C:\\web`} {
		if !strings.Contains(out, s) {
			t.Errorf("trl output lacks %q:\n%s", s, out)
		}
	}
}

// lineWriter records each Write it receives.
type lineWriter struct{ writes []string }

func (w *lineWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

// TestExportOneWritePerLine checks that each call reaches the writer as
// a single whole line, so a stream cut between calls never ends mid-line.
func TestExportOneWritePerLine(t *testing.T) {
	for _, f := range []Format{FormatTRL, FormatTRLConversational, FormatOpenAI} {
		var w lineWriter
		enc := NewEncoder(&w, f)
		pairs := exportPairs()
		for _, p := range pairs {
			if err := enc.Pair(p); err != nil {
				t.Fatal(err)
			}
		}
		if len(w.writes) != len(pairs) {
			t.Fatalf("%s: %d writes for %d pairs", f, len(w.writes), len(pairs))
		}
		for _, s := range w.writes {
			if strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") {
				t.Fatalf("%s: write is not one line: %q", f, s)
			}
		}
	}
}

func TestExportParseFormat(t *testing.T) {
	for _, f := range exportFormats {
		got, err := ParseFormat(string(f))
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, got, err)
		}
		if got.Paired() != (f != FormatTRLUnpaired) {
			t.Errorf("%s.Paired() = %v", f, got.Paired())
		}
	}
	for _, s := range []string{"", "TRL", " trl", "kto", "dpo", "trl_conversational", "openai-dpo"} {
		f, err := ParseFormat(s)
		if err == nil {
			t.Errorf("ParseFormat(%q) = %q, want an error", s, f)
			continue
		}
		if code := engram.ErrorCode(err); code != engram.EINVALID {
			t.Errorf("ParseFormat(%q): code %q, want %q", s, code, engram.EINVALID)
		}
		msg := engram.ErrorMessage(err)
		for _, known := range exportFormats {
			if !strings.Contains(msg, string(known)) {
				t.Errorf("ParseFormat(%q) message %q does not list %s", s, msg, known)
			}
		}
	}
}

// TestExportWrongKind checks that pairs and unpaired examples are only
// accepted by their own formats, and that a refused call writes nothing.
func TestExportWrongKind(t *testing.T) {
	pair, unp := exportPairs()[0], exportUnpaired()[0]
	check := func(what string, err error, buf *bytes.Buffer) {
		t.Helper()
		if code := engram.ErrorCode(err); code != engram.EINVALID {
			t.Errorf("%s: error %v (code %q), want %s", what, err, code, engram.EINVALID)
		}
		if buf.Len() != 0 {
			t.Errorf("%s wrote %q", what, buf.String())
		}
	}
	var buf bytes.Buffer
	check("Pair on trl-unpaired", NewEncoder(&buf, FormatTRLUnpaired).Pair(pair), &buf)
	for _, f := range []Format{FormatTRL, FormatTRLConversational, FormatOpenAI} {
		check(fmt.Sprintf("Unpaired on %s", f), NewEncoder(&buf, f).Unpaired(unp), &buf)
		check(fmt.Sprintf("nil Pair on %s", f), NewEncoder(&buf, f).Pair(nil), &buf)
	}
	check("nil Unpaired", NewEncoder(&buf, FormatTRLUnpaired).Unpaired(nil), &buf)
	check("Pair on unknown format", NewEncoder(&buf, "kto").Pair(pair), &buf)
	check("Unpaired on unknown format", NewEncoder(&buf, "kto").Unpaired(unp), &buf)
}

type failWriter struct{}

var errExportWrite = errors.New("disk full")

func (failWriter) Write([]byte) (int, error) { return 0, errExportWrite }

func TestExportWriteError(t *testing.T) {
	if err := NewEncoder(failWriter{}, FormatOpenAI).Pair(exportPairs()[0]); !errors.Is(err, errExportWrite) {
		t.Fatalf("Pair: %v, want the writer's error", err)
	}
	if err := NewEncoder(failWriter{}, FormatTRLUnpaired).Unpaired(exportUnpaired()[0]); !errors.Is(err, errExportWrite) {
		t.Fatalf("Unpaired: %v, want the writer's error", err)
	}
}

// TestExportNoAllocs pins the steady-state allocation count that keeps
// million-pair exports at constant memory.
func TestExportNoAllocs(t *testing.T) {
	if raceEnabled() {
		// The race detector makes sync.Pool drop entries at random, so
		// encoding/json reallocates the buffers it normally pools.
		t.Skip("allocation counts are not meaningful under -race")
	}
	pairs := exportPairs()
	for _, f := range []Format{FormatTRL, FormatTRLConversational, FormatOpenAI} {
		enc := NewEncoder(io.Discard, f)
		i := 0
		allocs := testing.AllocsPerRun(1000, func() {
			if err := enc.Pair(pairs[i%len(pairs)]); err != nil {
				t.Fatal(err)
			}
			i++
		})
		if allocs > 0 {
			t.Errorf("%s: %.2f allocations per pair, want 0", f, allocs)
		}
	}
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// benchPairs returns n distinct pairs of realistic size: a few hundred
// bytes of text, a quarter of them with a four-message chat prompt.
func benchPairs(n int) []*engram.Pair {
	pairs := make([]*engram.Pair, n)
	for i := range pairs {
		p := &engram.Pair{
			ID:       fmt.Sprintf("pair-%d", i),
			Kind:     engram.PairRegeneration,
			Prompt:   fmt.Sprintf("Question %d: how should I store the user's coffee preference (我喜欢喝咖啡，不加糖) so later sessions respect it?", i),
			Chosen:   strings.Repeat(fmt.Sprintf("Record it as a preference memory, key /prefs/coffee/%d, and inject it first. ", i), 3),
			Rejected: fmt.Sprintf("Just remember it <somehow> & hope, attempt %d.\n\tNo \"memory\" needed.", i),
			Margin:   1,
		}
		if i%4 == 0 {
			p.Messages = []engram.Message{
				{Role: "system", Content: "You are a helpful assistant with long-term memory."},
				{Role: "user", Content: "I like my coffee black."},
				{Role: "assistant", Content: "Noted: black coffee, no sugar."},
				{Role: "user", Content: p.Prompt},
			}
		}
		pairs[i] = p
	}
	return pairs
}

// BenchmarkExportPairs encodes 100,000 pairs per iteration to io.Discard
// in each paired format and reports throughput and allocations per pair.
func BenchmarkExportPairs(b *testing.B) {
	const perOp = 100_000
	pairs := benchPairs(1024)
	for _, f := range []Format{FormatTRL, FormatTRLConversational, FormatOpenAI} {
		b.Run(string(f), func(b *testing.B) {
			enc := NewEncoder(io.Discard, f)
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			ops := 0
			for b.Loop() {
				for i := range perOp {
					if err := enc.Pair(pairs[i%len(pairs)]); err != nil {
						b.Fatal(err)
					}
				}
				ops++
			}
			runtime.ReadMemStats(&after)
			n := float64(ops * perOp)
			b.ReportMetric(n/b.Elapsed().Seconds(), "pairs/s")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/pair")
		})
	}
}
