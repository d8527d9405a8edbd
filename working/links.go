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

// linkEntities links each message's episode to the nearest earlier memory
// of its user that names the first entity the message mentions
// (engram.FirstEntity, the conversation's speakers skipped), "mentions"
// (engram.RelMentions), when the entity is rare: fewer than
// entityCandidates of the user's memories name it. The nearest, not the
// first: every mention then hangs from the one before, so a hop from any
// of them reaches its neighbours without one memory gathering every
// mention of a name.
// Episodes the write guard shared are not linked; a memory service that
// stores no links gets none.
func (s *Service) linkEntities(ctx context.Context, events []*engram.SessionEvent, shared map[string]bool) error {
	links, ok := s.memories.(engram.LinkService)
	finder, finds := s.memories.(memoryFinder)
	if !ok || !finds {
		return nil
	}
	var speakers []string
	later := map[string]bool{}
	for _, e := range events {
		speakers = append(speakers, e.Who())
		later[e.MemoryID] = true
	}
	user := engram.UserFromContext(ctx)
	for _, e := range events {
		delete(later, e.MemoryID)
		entity := engram.FirstEntity(e.Content, speakers...)
		if entity == "" || e.MemoryID == "" || shared[e.MemoryID] {
			continue
		}
		page, err := finder.FindMemories(ctx, engram.MemoryFilter{Query: &entity, UserID: &user, Limit: entityCandidates})
		if err != nil {
			return err
		}
		if len(page.Items) >= entityCandidates {
			continue
		}
		for _, m := range page.Items {
			if m.ID == e.MemoryID || later[m.ID] {
				continue
			}
			_, err := links.CreateLink(ctx, engram.Link{From: e.MemoryID, To: m.ID, Relation: engram.RelMentions})
			if c := engram.ErrorCode(err); c != "" && c != engram.ENOTFOUND {
				return err
			}
			break
		}
	}
	return nil
}

// entityCandidates is how many of the newest memories naming an entity
// linkEntities reads to find the nearest earlier one (the post's own
// later episodes come first); an entity that fills the page is common
// and not linked.
const entityCandidates = 20

// memoryFinder lists memories by a filter (engram.MemoryService does).
type memoryFinder interface {
	FindMemories(ctx context.Context, f engram.MemoryFilter) (*engram.MemoryPage, error)
}
