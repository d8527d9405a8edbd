package working

import (
	"context"
	"strings"

	"github.com/engram-memory/engram"
)

// A prompt is up to three parts joined by blank lines, in this order and
// within one budget B (tiktoken, the joined string re-counted):
//
//  1. persona: "[Persona]" and the agent's persona (else the tenant's), at
//     most 30% of B; a longer one is cut at a line, then a word, boundary;
//  2. session: the session's context (see Context), at most half of what
//     the persona left;
//  3. memories: a recall of the query (the injection order of DESIGN §3:
//     preferences and constraints, high-reward strategies, then the rest)
//     with everything that is left.
//
// Unused room flows down: without a session the memories get it all.
// The recall is stored as any recall is, so feedback on recall_id
// credits the memories this prompt injected. The persona is a memory too;
// when the recall also injects it, its line is left out of the memories
// part rather than said twice.

// personaHeader starts the persona part.
const personaHeader = "[Persona]"

// Prompt implements engram.PromptService.
func (s *Service) Prompt(ctx context.Context, req engram.PromptRequest) (*engram.Prompt, error) {
	if strings.TrimSpace(req.Query) == "" {
		return nil, engram.Errorf(engram.EINVALID, "query must not be empty")
	}
	if err := engram.CheckBudget("token_budget", req.TokenBudget, s.cfg.MaxBudget); err != nil {
		return nil, err
	}
	if req.AgentID != "" {
		if err := engram.CheckID("agent_id", req.AgentID); err != nil {
			return nil, err
		}
	}
	if err := engram.CheckUserID(req.UserID); err != nil {
		return nil, err
	}
	if req.UserID != "" {
		ctx = engram.NewContextWithUser(ctx, req.UserID)
	}
	var events []*engram.SessionEvent
	if req.SessionID != "" {
		var err error
		if _, events, err = s.store.SessionEvents(ctx, req.SessionID); err != nil {
			return nil, err
		}
	}
	budget := req.TokenBudget
	out := &engram.Prompt{TokenBudget: budget, Parts: []engram.PromptPart{}}
	sep := s.tok.Count("\n\n")
	used := 0
	add := func(name, text string) {
		n := s.tok.Count(text)
		if len(out.Parts) > 0 {
			used += sep
		}
		used += n
		out.Parts = append(out.Parts, engram.PromptPart{Name: name, Context: text, Tokens: n})
	}

	persona, personaID, err := s.personaText(ctx, req.AgentID)
	if err != nil {
		return nil, err
	}
	if persona != "" {
		if text := s.fit(personaHeader+"\n"+strings.TrimSpace(persona), budget*3/10); text != "" {
			add("persona", text)
		}
	}
	if req.SessionID != "" {
		room := (budget - used - sep) / 2
		if room > 0 {
			if sc := s.render(ctx, req.SessionID, events, room); sc.Context != "" {
				add("session", sc.Context)
			}
		}
	}
	room := budget - used
	if len(out.Parts) > 0 {
		room -= sep
	}
	for attempt := 0; ; attempt++ {
		rec, err := s.recall.Recall(ctx, engram.RecallRequest{Query: req.Query, TokenBudget: max(room, 1),
			AgentID: req.AgentID, UserID: req.UserID, SessionID: req.SessionID, Hops: req.Hops})
		if err != nil {
			return nil, err
		}
		out.Recall, out.RecallID = rec, rec.ID
		parts := out.Parts
		if text := withoutMemory(rec, personaID); text != "" && room >= 1 {
			parts = append(parts, engram.PromptPart{Name: "memories", Context: text, Tokens: s.tok.Count(text)})
		}
		texts := make([]string, len(parts))
		for i, p := range parts {
			texts[i] = p.Context
		}
		out.Context = strings.Join(texts, "\n\n")
		out.TokensUsed = s.tok.Count(out.Context)
		if out.TokensUsed <= budget || attempt == 2 {
			out.Parts = parts
			break
		}
		room -= out.TokensUsed - budget // joining cost more than counted apart: ask again with less
	}
	if out.TokensUsed > budget { // give up the memories rather than the budget
		out.Parts = out.Parts[:len(out.Parts)-1]
		texts := make([]string, len(out.Parts))
		for i, p := range out.Parts {
			texts[i] = p.Context
		}
		out.Context = strings.Join(texts, "\n\n")
		out.TokensUsed = s.tok.Count(out.Context)
	}
	for i := range out.Parts {
		out.Parts[i].Share = float64(out.Parts[i].Tokens) / float64(budget)
	}
	return out, nil
}

// withoutMemory returns a recall's context without the line of memory
// id (its lines follow the header in the order of its items); "" when
// nothing else is left.
func withoutMemory(rec *engram.Recall, id string) string {
	lines := strings.Split(rec.Context, "\n")
	if id == "" || len(lines) != len(rec.Items)+1 {
		return rec.Context
	}
	kept := lines[:1]
	for i, it := range rec.Items {
		if it.ID != id {
			kept = append(kept, lines[i+1])
		}
	}
	if len(kept) == 1 {
		return ""
	}
	return strings.Join(kept, "\n")
}

// fit returns text cut to at most limit tokens: whole lines while they
// fit, then whole words of the next line; "" if not even the first word
// fits.
func (s *Service) fit(text string, limit int) string {
	if limit < 1 {
		return ""
	}
	if s.tok.Count(text) <= limit {
		return text
	}
	lines := strings.Split(text, "\n")
	kept := ""
	for _, l := range lines {
		next := l
		if kept != "" {
			next = kept + "\n" + l
		}
		if s.tok.Count(next) > limit {
			for i, w := range strings.Fields(l) {
				try := kept + " " + w
				switch {
				case kept == "":
					try = w
				case i == 0:
					try = kept + "\n" + w
				}
				if s.tok.Count(try) > limit {
					break
				}
				kept = try
			}
			break
		}
		kept = next
	}
	return kept
}
