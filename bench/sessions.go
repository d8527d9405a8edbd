package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/engram-memory/engram"
)

// locomoDate is the layout of a LoCoMo session's date, "1:56 pm on 8 May, 2023".
const locomoDate = "3:04 pm on 2 January, 2006"

// ingestSessions posts the conversation as a chat product would with
// working memory: one session per LoCoMo session (id "<sample>-s<n>"),
// each turn a message event with its speaker, its text (and "[shares
// caption]" when it shares an image) as content, the session's date as
// at and its dia_id as message_id, in posts of at most 100 events. engram
// turns each message into an episode itself; nothing is built by hand.
// It returns memory id → dia_id from the episode ids the posts answer.
func ingestSessions(ctx context.Context, svc Services, conv locomoConversation) (map[string]string, error) {
	byMemory := map[string]string{}
	for _, s := range locomoSessions(conv) {
		var at *time.Time
		if t, err := time.Parse(locomoDate, s.date); err == nil {
			at = &t
		}
		id := fmt.Sprintf("%s-s%d", conv.SampleID, s.n)
		for i := 0; i < len(s.turns); i += 100 {
			var events []*engram.SessionEvent
			for _, t := range s.turns[i:min(i+100, len(s.turns))] {
				content := t.Text
				if t.BlipCaption != "" {
					content += " [shares " + t.BlipCaption + "]"
				}
				events = append(events, &engram.SessionEvent{Type: engram.EventMessage, Speaker: t.Speaker, Content: content,
					At: at, MessageID: t.DiaID})
			}
			res, err := svc.Sessions.AppendEvents(ctx, id, engram.EventBatch{Events: events})
			if err != nil {
				return nil, fmt.Errorf("session %s: %w", id, err)
			}
			for _, e := range res.Events {
				byMemory[e.MemoryID] = e.MessageID
			}
		}
	}
	return byMemory, nil
}
