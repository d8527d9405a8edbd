package clearance

import (
	"context"

	"github.com/engram-memory/engram"
)

// Links is the link store as a reader may use it: a memory a link leads
// to is read through See, so multi-hop recall withholds or masks what is
// above the key's clearance as every other recall read does, and a key
// may not link or unlink a memory it may not read.
type Links struct {
	engram.LinkService
	Memories engram.MemoryService
}

// FindMemoryByID reads a memory a link leads to, as the reader may see it.
func (s Links) FindMemoryByID(ctx context.Context, id string) (*engram.Memory, error) {
	m, err := s.Memories.FindMemoryByID(ctx, id)
	return SeeOne(ctx, m, err)
}

// CreateLink implements engram.LinkService for both ends the reader may read.
func (s Links) CreateLink(ctx context.Context, l engram.Link) (*engram.Link, error) {
	if err := s.guardIDs(ctx, l.From, l.To); err != nil {
		return nil, err
	}
	return s.LinkService.CreateLink(ctx, l)
}

// DeleteLink implements engram.LinkService for both ends the reader may read.
func (s Links) DeleteLink(ctx context.Context, from, to, relation string) ([]*engram.Link, error) {
	if err := s.guardIDs(ctx, from, to); err != nil {
		return nil, err
	}
	return s.LinkService.DeleteLink(ctx, from, to, relation)
}

// FindLinks implements engram.LinkService for a memory the reader may read.
func (s Links) FindLinks(ctx context.Context, id string) ([]*engram.Link, error) {
	if err := s.guardIDs(ctx, id); err != nil {
		return nil, err
	}
	return s.LinkService.FindLinks(ctx, id)
}

func (s Links) guardIDs(ctx context.Context, ids ...string) error {
	for _, id := range ids {
		if err := guardID(ctx, s.Memories, id); err != nil {
			return err
		}
	}
	return nil
}

// LinkedMemories is the memory service with its links, both read through
// the reader's clearance; the server offers the link routes and tool
// when its memory service is one.
type LinkedMemories struct {
	Memories
	Links Links
}

// NewLinkedMemories wraps a store that holds memories and their links.
func NewLinkedMemories(ms engram.MemoryService, ls engram.LinkService) LinkedMemories {
	return LinkedMemories{Memories: Memories{MemoryService: ms}, Links: Links{LinkService: ls, Memories: ms}}
}

// CreateLink implements engram.LinkService.
func (s LinkedMemories) CreateLink(ctx context.Context, l engram.Link) (*engram.Link, error) {
	return s.Links.CreateLink(ctx, l)
}

// DeleteLink implements engram.LinkService.
func (s LinkedMemories) DeleteLink(ctx context.Context, from, to, relation string) ([]*engram.Link, error) {
	return s.Links.DeleteLink(ctx, from, to, relation)
}

// FindLinks implements engram.LinkService.
func (s LinkedMemories) FindLinks(ctx context.Context, id string) ([]*engram.Link, error) {
	return s.Links.FindLinks(ctx, id)
}

// FindLinksOf implements engram.LinkService.
func (s LinkedMemories) FindLinksOf(ctx context.Context, ids []string) ([]*engram.Link, error) {
	return s.Links.FindLinksOf(ctx, ids)
}
