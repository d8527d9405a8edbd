package sleep

import (
	"context"
	"slices"

	"github.com/engram-memory/engram"
)

// maxEntityMemories is how many of a user's live memories may name an
// entity for it to count as rare: a name in more of them is the
// conversation's subject (a speaker, the user), which links nothing
// useful together.
const maxEntityMemories = 5

// linkEntities links the live memories of each user that name the same
// rare entity (engram.Entities; at most maxEntityMemories of the user's
// memories name it, the tenant's own statistics), "same_entity"
// (engram.RelSameEntity): each to the one before it, oldest first, a
// chain a hop walks both ways. Linking again what is linked changes
// nothing, so each sleep only adds the new pairs. A store without links
// gets none.
func (s *Sleeper) linkEntities(ctx context.Context, live []*engram.Memory) (int, error) {
	links, ok := s.store.(engram.LinkService)
	if !ok {
		return 0, nil
	}
	type scope struct{ user, entity string }
	named := map[scope][]*engram.Memory{}
	var order []scope
	for _, m := range live {
		for _, e := range engram.Entities(m.Content) {
			k := scope{m.UserID, e}
			if named[k] == nil {
				order = append(order, k)
			}
			named[k] = append(named[k], m)
		}
	}
	made := 0
	for _, k := range order {
		ms := named[k]
		if len(ms) < 2 || len(ms) > maxEntityMemories {
			continue
		}
		slices.SortStableFunc(ms, func(a, b *engram.Memory) int { return a.CreatedAt.Compare(b.CreatedAt) })
		for i := 1; i < len(ms); i++ {
			l, err := links.CreateLink(ctx, engram.Link{From: ms[i].ID, To: ms[i-1].ID, Relation: engram.RelSameEntity})
			switch c := engram.ErrorCode(err); {
			case c == engram.ENOTFOUND:
			case c != "":
				return made, err
			case l.Version > ms[i].Version:
				made++
				ms[i].Version = l.Version
			}
		}
	}
	return made, nil
}
