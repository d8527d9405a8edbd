package working

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/engram-memory/engram"
)

// maxNameChars bounds a speaker, role, tool name or message id.
const maxNameChars = 64

// AppendEvents implements engram.SessionService. Every event is checked
// before anything is written; then the events are stored in one
// transaction and, with sessions.remember_messages, each message becomes
// an L2 episode (see episodes). The answer carries each message's
// episode id.
func (s *Service) AppendEvents(ctx context.Context, sessionID string, b engram.EventBatch) (*engram.EventsResult, error) {
	if err := engram.CheckID("session id", sessionID); err != nil {
		return nil, err
	}
	if b.ResourceID != "" {
		if err := engram.CheckID("resource_id", b.ResourceID); err != nil {
			return nil, err
		}
	}
	if len(b.Events) == 0 {
		return nil, engram.Errorf(engram.EINVALID, "send one event or {\"events\":[…]} with at least one")
	}
	if len(b.Events) > s.cfg.Limits.MaxBatch {
		return nil, engram.Errorf(engram.ETOOLARGE, "at most %d events per request", s.cfg.Limits.MaxBatch)
	}
	for i, e := range b.Events {
		if err := s.checkEvent(e); err != nil {
			if len(b.Events) > 1 {
				err.Message = "events[" + strconv.Itoa(i) + "]: " + err.Message
			}
			return nil, err
		}
	}
	if err := s.checkEpisodesQuota(ctx, b.Events); err != nil {
		return nil, err
	}
	sess, prev, err := s.store.AppendSessionEvents(ctx, sessionID, b.ResourceID, b.Events, s.cfg.Sessions.TTL)
	if err != nil {
		return nil, err
	}
	if s.cfg.Sessions.RememberMessages {
		if err := s.episodes(ctx, sess, prev, b.Events); err != nil {
			return nil, err
		}
	}
	return &engram.EventsResult{Session: sess, Events: b.Events}, nil
}

// checkEpisodesQuota refuses, before anything is stored, a post whose
// messages would become episodes past the tenant's memories or bytes
// quota: the events and their episodes are two transactions, and a post
// refused for its episodes should not leave its events behind. Only a
// write racing between the two can still store the events and have the
// episodes refused (the quota itself always holds).
func (s *Service) checkEpisodesQuota(ctx context.Context, events []*engram.SessionEvent) error {
	if !s.cfg.Sessions.RememberMessages {
		return nil
	}
	var n, size int64
	for _, e := range events {
		if e.Type == engram.EventMessage {
			n++
			size += int64(len(turn(e)))
		}
	}
	if n == 0 {
		return nil
	}
	return s.store.CheckQuota(ctx, n, size)
}

// checkEvent validates one event and normalises its times to UTC.
func (s *Service) checkEvent(e *engram.SessionEvent) *engram.Error {
	if e == nil {
		return engram.Errorf(engram.EINVALID, "an event must be an object")
	}
	if !slices.Contains(engram.EventTypes, e.Type) {
		if e.Type == "" {
			return engram.Errorf(engram.EINVALID, "type is required; one of %s", strings.Join(engram.EventTypes, ", "))
		}
		return engram.Errorf(engram.EINVALID, "unknown event type %q; one of %s", e.Type, strings.Join(engram.EventTypes, ", "))
	}
	for name, v := range map[string]string{"speaker": e.Speaker, "role": e.Role, "name": e.Name, "message_id": e.MessageID} {
		if utf8.RuneCountInString(v) > maxNameChars {
			return engram.Errorf(engram.EINVALID, "%s must be at most %d characters", name, maxNameChars)
		}
		if strings.IndexFunc(v, unicode.IsControl) >= 0 {
			return engram.Errorf(engram.EINVALID, "%s must be one line without control characters", name)
		}
	}
	if n := utf8.RuneCountInString(e.Content); n > s.cfg.Limits.MaxContentChars-maxNameChars-2 {
		return engram.Errorf(engram.ETOOLARGE, "content must be at most %d characters", s.cfg.Limits.MaxContentChars-maxNameChars-2)
	}
	if len(e.Args)+len(e.Result) > s.cfg.Limits.MaxContentChars {
		return engram.Errorf(engram.ETOOLARGE, "args and result must be at most %d bytes together", s.cfg.Limits.MaxContentChars)
	}
	switch e.Type {
	case engram.EventMessage:
		if strings.TrimSpace(e.Speaker) == "" && strings.TrimSpace(e.Role) == "" {
			return engram.Errorf(engram.EINVALID, "a message needs speaker or role")
		}
		if strings.TrimSpace(e.Content) == "" {
			return engram.Errorf(engram.EINVALID, "a message needs content")
		}
	case engram.EventToolCall:
		if strings.TrimSpace(e.Name) == "" {
			return engram.Errorf(engram.EINVALID, "a tool_call needs name")
		}
	default:
		if strings.TrimSpace(e.Content) == "" {
			return engram.Errorf(engram.EINVALID, "a %s needs content", e.Type)
		}
	}
	if e.Type != engram.EventMessage && (e.Speaker != "" || e.MessageID != "" || e.At != nil) {
		return engram.Errorf(engram.EINVALID, "speaker, message_id and at belong to message events")
	}
	if e.Type != engram.EventToolCall && (e.Name != "" || e.Args != nil || e.Result != nil) {
		return engram.Errorf(engram.EINVALID, "name, args and result belong to tool_call events")
	}
	if e.At != nil {
		at := e.At.UTC().Truncate(time.Microsecond)
		e.At = &at
	}
	return nil
}

// turn renders a message as an episode's text: "Speaker: content".
func turn(e *engram.SessionEvent) string {
	return e.Who() + ": " + strings.TrimSpace(e.Content)
}

// episodes stores each message as an L2 memory: type episode, the
// category of what it says about the user (EpisodeCategory), its speaker (or role) as a tag,
// occurred_at from at (else the time received), a source naming the
// session and the message id (else the event's sequence number), and as
// its context (which recall searches at half weight but never injects)
// the conversation around it: the session's previous message and, once
// it arrives, the reply — the message after it, in the same post or the
// next one. A question is asked in the words of a statement, of what it
// answered, or of what was said back. The same text twice in one category
// is one memory (the write guard); only a message's own episode takes the
// reply, never one the write guard shared.
func (s *Service) episodes(ctx context.Context, sess *engram.Session, prev *engram.SessionEvent, events []*engram.SessionEvent) error {
	var ms []*engram.Memory
	var owners []*engram.SessionEvent
	last := ""
	if prev != nil {
		last = turn(prev)
	}
	for _, e := range events {
		if e.Type != engram.EventMessage {
			continue
		}
		text := turn(e)
		route, err := s.router.RouteQuery(ctx, text)
		if err != nil {
			return err
		}
		category := EpisodeCategory(e, route)
		at := e.CreatedAt
		if e.At != nil {
			at = *e.At
		}
		locator := e.MessageID
		if locator == "" {
			locator = "#" + strconv.FormatInt(e.Seq, 10)
		}
		raw, _ := json.Marshal(episodeData{SessionID: sess.ID, Seq: e.Seq, MessageID: e.MessageID, ResourceID: sess.ResourceID})
		ms = append(ms, &engram.Memory{Content: text, Category: category, Type: "episode", Tags: []string{e.Who()},
			Context: last, OccurredAt: &at, Source: sessionSource(sess.ID, locator), Data: raw})
		owners = append(owners, e)
		last = text
	}
	if len(ms) == 0 {
		return nil
	}
	for i := 0; i+1 < len(ms); i++ {
		ms[i].Context = s.withReply(ms[i].Context, ms[i+1].Content)
	}
	ids, shared := map[int64]string{}, map[string]bool{}
	for i := 0; i < len(ms); i += s.cfg.Limits.MaxBatch {
		res, err := s.memories.CreateMemories(ctx, ms[i:min(i+s.cfg.Limits.MaxBatch, len(ms))])
		if err != nil {
			return err
		}
		for j, r := range res {
			owners[i+j].MemoryID = r.Memory.ID
			ids[owners[i+j].Seq] = r.Memory.ID
			if r.Deduplicated {
				shared[r.Memory.ID] = true
			}
		}
	}
	if err := s.store.SetEventMemories(ctx, sess.ID, ids); err != nil {
		return err
	}
	own := prev != nil && prev.MemoryID != ""
	if own {
		var err error
		if own, err = s.addReply(ctx, sess.ID, prev, ms[0].Content); err != nil {
			return err
		}
	}
	if !own {
		prev = nil
	}
	if err := s.linkTurns(ctx, prev, owners, shared); err != nil {
		return err
	}
	return s.linkEntities(ctx, owners, shared)
}

// episodeData is an episode's data: where in which session it was said.
type episodeData struct {
	SessionID  string `json:"session_id"`
	Seq        int64  `json:"seq"`
	MessageID  string `json:"message_id,omitempty"`
	ResourceID string `json:"resource_id,omitempty"`
}

// withReply appends a reply to an episode's context, within the content
// limit.
func (s *Service) withReply(context, reply string) string {
	if context != "" {
		reply = context + "\n" + reply
	}
	return clip(reply, s.cfg.Limits.MaxContentChars)
}

// addReply gives the episode of the session's previous message, posted
// earlier, the reply that has now arrived. An episode that is not that
// message's own (the write guard shared another's), was deleted, or was
// changed meanwhile is left alone. It reports whether the episode is the
// message's own and live (linkTurns links only those).
func (s *Service) addReply(ctx context.Context, sessionID string, prev *engram.SessionEvent, reply string) (bool, error) {
	m, err := s.memories.FindMemoryByID(ctx, prev.MemoryID)
	if engram.ErrorCode(err) == engram.ENOTFOUND {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var d episodeData
	if json.Unmarshal(m.Data, &d) != nil || d.SessionID != sessionID || d.Seq != prev.Seq || !m.Valid {
		return false, nil
	}
	if m.Version != 1 {
		return true, nil
	}
	ctxText := s.withReply(m.Context, reply)
	_, err = s.memories.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Context: &ctxText, ExpectVersion: &m.Version})
	switch engram.ErrorCode(err) {
	case "", engram.ENOTFOUND, engram.ECONFLICT:
		return true, nil
	}
	return false, err
}
