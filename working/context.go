package working

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/engram-memory/engram"
)

// A session's context is rendered as lines:
//
//	[Session <id>]
//	trigger: …            the fixed zone, never compressed: every trigger,
//	focus: …              the current focus (the latest query or sub-task)
//	instruction: …        and every instruction, in order
//	- <older round>       the sliding zone: rounds older than the newest
//	- <older round>       WholeRounds, one line each
//	user: …               the newest rounds whole, one line an event
//	tool search {…} -> {…}
//
// A round starts at a query, a sub-task, a message with role user, or a
// message with a speaker and no role (a conversation between people has
// no assistant side); every other event joins the round before it.
//
// Fitting the budget: fixed-zone lines are kept whole in order while they
// fit (one that does not is left out and listed in omitted_fixed, never
// cut); then rounds, newest first: the newest WholeRounds whole if they
// fit, else compressed; older ones compressed; once a round fits in
// neither form it and all older ones are dropped. The rendered text is
// re-counted and, should joining have cost a token more than the parts,
// its oldest sliding lines are dropped until it fits.

// Header prefix of a session's context.
const sessionHeader = "[Session "

// round is a run of events that starts with a question or a user turn.
type round struct {
	events []*engram.SessionEvent
}

func rounds(events []*engram.SessionEvent) []*round {
	var out []*round
	for _, e := range events {
		switch e.Type {
		case engram.EventTrigger, engram.EventInstruction:
			continue
		}
		starts := e.Type == engram.EventQuery || e.Type == engram.EventSubtask ||
			e.Type == engram.EventMessage && (strings.EqualFold(e.Role, "user") || e.Role == "" && e.Speaker != "")
		if starts || len(out) == 0 {
			out = append(out, &round{})
		}
		r := out[len(out)-1]
		r.events = append(r.events, e)
	}
	return out
}

// line renders one event whole on one line.
func line(e *engram.SessionEvent) string {
	switch e.Type {
	case engram.EventMessage:
		return fold(e.Who()) + ": " + fold(e.Content)
	case engram.EventToolCall:
		l := "tool " + fold(e.Name)
		if len(e.Args) > 0 {
			l += " " + compactJSON(e.Args)
		}
		if len(e.Result) > 0 {
			l += " -> " + compactJSON(e.Result)
		}
		return l
	case engram.EventLLMResponse:
		return "llm: " + fold(e.Content)
	}
	return e.Type + ": " + fold(e.Content)
}

// compress renders a round as one line: its first event cut to 24 words,
// the tools it called, its last decision and its last answer cut to 16
// words each.
func compress(r *round) string {
	parts := []string{cut(line(r.events[0]), 24)}
	var tools []string
	var decision, answer string
	for _, e := range r.events[1:] {
		switch {
		case e.Type == engram.EventToolCall:
			if len(tools) == 0 || tools[len(tools)-1] != fold(e.Name) {
				tools = append(tools, fold(e.Name))
			}
		case e.Type == engram.EventDecision:
			decision = "decision: " + cut(fold(e.Content), 16)
		case e.Type == engram.EventLLMResponse, e.Type == engram.EventMessage:
			answer = cut(line(e), 16)
		}
	}
	if len(tools) > 0 {
		parts = append(parts, "tools: "+strings.Join(tools, ", "))
	}
	if decision != "" {
		parts = append(parts, decision)
	}
	if answer != "" {
		parts = append(parts, answer)
	}
	return "- " + strings.Join(parts, " | ")
}

// Events implements engram.SessionService.
func (s *Service) Events(ctx context.Context, sessionID string, page engram.EventPage) (*engram.EventList, error) {
	if err := engram.CheckID("session id", sessionID); err != nil {
		return nil, err
	}
	return s.store.SessionEventsPage(ctx, sessionID, page)
}

// Context implements engram.SessionService.
func (s *Service) Context(ctx context.Context, sessionID string, tokenLimit int) (*engram.SessionContext, error) {
	if err := engram.CheckID("session id", sessionID); err != nil {
		return nil, err
	}
	if err := engram.CheckBudget("token_limit", tokenLimit, s.cfg.MaxBudget); err != nil {
		return nil, err
	}
	_, events, err := s.store.SessionEvents(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return s.render(ctx, sessionID, events, tokenLimit), nil
}

func (s *Service) render(ctx context.Context, sessionID string, events []*engram.SessionEvent, limit int) *engram.SessionContext {
	out := &engram.SessionContext{SessionID: sessionID, TokenLimit: limit, Summarizer: "deterministic"}
	header := sessionHeader + sessionID + "]"
	nl := s.tok.Count("\n")
	used := s.tok.Count(header)
	if used > limit {
		return out
	}
	var fixed []string
	var focus *engram.SessionEvent
	for _, e := range events {
		if e.Type == engram.EventQuery || e.Type == engram.EventSubtask {
			focus = e
		}
	}
	var zone []*engram.SessionEvent
	for _, typ := range []string{engram.EventTrigger, "focus", engram.EventInstruction} {
		for _, e := range events {
			if e.Type == typ || typ == "focus" && e == focus {
				zone = append(zone, e)
			}
		}
	}
	for _, e := range zone {
		l := line(e)
		if e == focus {
			l = "focus: " + fold(e.Content)
		}
		if n := s.tok.Count(l); used+nl+n <= limit {
			fixed = append(fixed, l)
			used += nl + n
		} else {
			out.Omitted = append(out.Omitted, e.Seq)
		}
	}

	rs := rounds(events)
	whole := s.cfg.Sessions.WholeRounds
	older := max(len(rs)-whole, 0)
	compressed := make([]string, len(rs))
	for i, r := range rs {
		compressed[i] = compress(r)
	}
	if s.chat != nil && older > 0 {
		lines, err := s.chat.Summarize(ctx, rs[:older])
		if err != nil {
			out.Fallback = err.Error()
		} else {
			copy(compressed, lines)
			out.Summarizer = s.chat.Name()
		}
	}
	blocks := make([][]string, len(rs)) // newest first is how they are chosen
	for i := len(rs) - 1; i >= 0; i-- {
		var lines []string
		if i >= older {
			for _, e := range rs[i].events {
				lines = append(lines, line(e))
			}
			if n := s.countLines(lines, nl); used+n <= limit {
				blocks[i], used = lines, used+n
				out.Rounds.Whole++
				continue
			}
		}
		if n := nl + s.tok.Count(compressed[i]); used+n <= limit {
			blocks[i], used = []string{compressed[i]}, used+n
			out.Rounds.Compressed++
			continue
		}
		out.Rounds.Dropped = i + 1
		break
	}
	var sliding []string
	for _, b := range blocks {
		sliding = append(sliding, b...)
	}
	for {
		all := append(append([]string{header}, fixed...), sliding...)
		out.Context = strings.Join(all, "\n")
		if out.TokensUsed = s.tok.Count(out.Context); out.TokensUsed <= limit {
			break
		}
		switch {
		case len(sliding) > 0:
			sliding = sliding[1:]
		case len(fixed) > 0:
			fixed = fixed[:len(fixed)-1]
		}
	}
	return out
}

func (s *Service) countLines(lines []string, nl int) int {
	n := 0
	for _, l := range lines {
		n += nl + s.tok.Count(l)
	}
	return n
}

// fold trims s and replaces every run of white space by one space.
func fold(s string) string { return strings.Join(strings.Fields(s), " ") }

// cut keeps the first n words of s, and at most 2n characters, marking a
// cut with "…": Chinese and Japanese put no spaces between words, so a
// whole sentence is one field, and two characters stand for a word.
func cut(s string, n int) string {
	w := strings.Fields(s)
	out, cutOff := strings.Join(w, " "), false
	if len(w) > n {
		out, cutOff = strings.Join(w[:n], " "), true
	}
	if r := []rune(out); len(r) > 2*n && !isLatin(r) {
		out, cutOff = string(r[:2*n]), true
	}
	if cutOff {
		return out + " …"
	}
	return out
}

// isLatin reports whether r is mostly ASCII, i.e. words are space-separated.
func isLatin(r []rune) bool {
	ascii := 0
	for _, c := range r {
		if c < 0x80 {
			ascii++
		}
	}
	return ascii*2 > len(r)
}

func compactJSON(raw json.RawMessage) string {
	var b strings.Builder
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return fold(string(raw))
	}
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}
