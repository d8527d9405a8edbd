package working

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/engram-memory/engram"
)

// maxNoteChars bounds the note of an ended session.
const maxNoteChars = 4000

// End implements engram.SessionService. It distils the session (see
// distil) into L2 strategy memories through the write guard, so ending
// two sessions that learned the same thing stores it once, then closes
// the session: its events stay readable until the TTL, and new ones are
// refused with ECONFLICT.
func (s *Service) End(ctx context.Context, sessionID, outcome, note string) (*engram.SessionEnd, error) {
	if err := engram.CheckID("session id", sessionID); err != nil {
		return nil, err
	}
	if outcome != engram.OutcomeSuccess && outcome != engram.OutcomeFailure {
		return nil, engram.Errorf(engram.EINVALID, "outcome must be success or failure")
	}
	if utf8.RuneCountInString(note) > maxNoteChars {
		return nil, engram.Errorf(engram.EINVALID, "note must be at most %d characters", maxNoteChars)
	}
	note = fold(note)
	sess, events, err := s.store.SessionEvents(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if sess.Status == engram.SessionClosed {
		return nil, engram.Errorf(engram.ECONFLICT, "session %s is already closed", sessionID)
	}
	out := &engram.SessionEnd{Strategies: []*engram.Memory{}}
	if ms := s.distil(sess, events, outcome, note); len(ms) > 0 {
		res, err := s.memories.CreateMemories(ctx, ms)
		if err != nil {
			return nil, err
		}
		for _, r := range res {
			out.Strategies = append(out.Strategies, r.Memory)
			if r.Deduplicated {
				out.Deduplicated++
			}
		}
	}
	if out.Session, err = s.store.CloseSession(ctx, sessionID, outcome, note); err != nil {
		return nil, err
	}
	return out, nil
}

// distil turns a session into strategy memories, deterministically:
//
//   - one for the run: its task (the current focus, else the first
//     trigger, else the first message), the outcome, the tools it used
//     and the note; after a failure also the last tool result, which is
//     usually why;
//   - one per decision: "Worked for <task>: <decision>" after a success,
//     "Did not work for <task>: <decision> (<note>)" after a failure.
//
// Each cites the session and the events it rests on. A session with no
// query, sub-task, trigger, decision or tool call is a conversation, not a
// run: its messages are episodes already, and ending it writes nothing.
func (s *Service) distil(sess *engram.Session, events []*engram.SessionEvent, outcome, note string) []*engram.Memory {
	var task, trigger, firstMsg string
	var tools []string
	var lastTool *engram.SessionEvent
	var decisions []*engram.SessionEvent
	cited := []int64{}
	for _, e := range events {
		switch e.Type {
		case engram.EventQuery, engram.EventSubtask:
			task = fold(e.Content)
			cited = append(cited, e.Seq)
		case engram.EventTrigger:
			if trigger == "" {
				trigger = fold(e.Content)
			}
		case engram.EventMessage:
			if firstMsg == "" {
				firstMsg = fold(e.Content)
			}
		case engram.EventDecision:
			decisions = append(decisions, e)
		case engram.EventToolCall:
			if !slices.Contains(tools, fold(e.Name)) {
				tools = append(tools, fold(e.Name))
			}
			lastTool = e
			cited = append(cited, e.Seq)
		}
	}
	if task == "" {
		task = trigger
	}
	if task == "" && len(decisions) == 0 && len(tools) == 0 {
		return nil // a conversation, not a run: its messages are episodes already
	}
	if task == "" {
		task = firstMsg
	}
	task = cut(task, 40)
	category := engram.CategoryStrategy
	if !slices.Contains(s.cfg.Categories, category) {
		category = ""
	}
	newMemory := func(content string, seqs []int64) *engram.Memory {
		data, _ := json.Marshal(map[string]any{"session_id": sess.ID, "outcome": outcome, "events": seqs})
		return &engram.Memory{Content: clip(content, s.cfg.Limits.MaxContentChars), Category: category, Type: "strategy",
			Tags: []string{"session", outcome}, Source: sessionSource(sess.ID, ""), Data: data}
	}
	var run strings.Builder
	if outcome == engram.OutcomeSuccess {
		run.WriteString("Succeeded: " + task)
	} else {
		run.WriteString("Failed: " + task)
	}
	if len(tools) > 0 {
		run.WriteString(". Tools used: " + strings.Join(tools, ", "))
	}
	if outcome == engram.OutcomeFailure && lastTool != nil && len(lastTool.Result) > 0 {
		run.WriteString(". Last tool result (" + fold(lastTool.Name) + "): " + cut(compactJSON(lastTool.Result), 40))
	}
	if note != "" {
		run.WriteString(". Note: " + note)
	}
	out := []*engram.Memory{newMemory(run.String(), cited)}
	for _, d := range decisions {
		var text string
		if outcome == engram.OutcomeSuccess {
			text = "Worked for " + task + ": " + fold(d.Content)
		} else {
			text = "Did not work for " + task + ": " + fold(d.Content)
			if note != "" {
				text += " (" + note + ")"
			}
		}
		out = append(out, newMemory(text, []int64{d.Seq}))
	}
	return out
}

// clip cuts s to at most n characters.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
