package working

import (
	"context"

	"github.com/engram-memory/engram"
)

// linkTurns links each message's episode to the next message's, "answered_by"
// (engram.RelAnsweredBy): the previous post's last message to this post's
// first, then each to the one after it. The link belongs to the earlier
// episode, which has its reply already (addReply ran first), so the last
// episode of a post stays at version 1 until the next post's reply comes
// and links it. prev is nil when its episode is not its own; episodes the
// write guard shared with another message (shared) are not linked, and a
// memory service that stores no links gets none.
func (s *Service) linkTurns(ctx context.Context, prev *engram.SessionEvent, events []*engram.SessionEvent, shared map[string]bool) error {
	links, ok := s.memories.(engram.LinkService)
	if !ok {
		return nil
	}
	from := ""
	if prev != nil {
		from = prev.MemoryID
	}
	for _, e := range events {
		if shared[e.MemoryID] {
			from = ""
			continue
		}
		if from != "" && e.MemoryID != "" && from != e.MemoryID {
			_, err := links.CreateLink(ctx, engram.Link{From: from, To: e.MemoryID, Relation: engram.RelAnsweredBy})
			switch engram.ErrorCode(err) {
			case "", engram.ENOTFOUND:
			default:
				return err
			}
		}
		from = e.MemoryID
	}
	return nil
}
