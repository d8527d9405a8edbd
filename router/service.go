package router

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/engram-memory/engram"
)

// LabelSource yields the labelled L2 memories of the tenant in ctx (see
// engram.TenantFromContext): each memory's category and text.
type LabelSource interface {
	EachLabelled(ctx context.Context, fn func(category, text string) error) error
}

// Service implements engram.RouterService on a Router. The first query of a
// tenant loads the tenant's labelled memories from the LabelSource once;
// after that, writers keep the model current with Observe and Forget.
type Service struct {
	router *Router
	src    LabelSource

	mu      sync.Mutex
	loading map[string]*sync.Mutex // per-tenant load locks, dropped once loaded
}

var _ engram.RouterService = (*Service)(nil)

// NewService returns a Service routing with r and learning from src. A nil
// src routes on the priors and on what Observe is told.
func NewService(r *Router, src LabelSource) *Service {
	return &Service{router: r, src: src, loading: map[string]*sync.Mutex{}}
}

// RouteQuery routes query for the tenant in ctx. A query longer than
// MaxQueryRunes (2000) runes is routed on its first MaxQueryRunes runes.
// It returns EINVALID for an empty or blank query, and the LabelSource's
// error, wrapped, when the tenant's first load fails (the next query tries
// again).
func (s *Service) RouteQuery(ctx context.Context, query string) (*engram.Route, error) {
	if strings.TrimSpace(query) == "" {
		return nil, engram.Errorf(engram.EINVALID, "query is empty")
	}
	tenant := engram.TenantFromContext(ctx)
	if err := s.load(ctx, tenant); err != nil {
		return nil, err
	}
	route := s.router.Route(tenant, query)
	return &route, nil
}

// Observe learns a memory written for the tenant in ctx. Until the tenant
// is loaded it does nothing: the load will read the memory from the store.
func (s *Service) Observe(ctx context.Context, category, text string) {
	if tenant := engram.TenantFromContext(ctx); s.router.Loaded(tenant) {
		s.router.Observe(tenant, category, text)
	}
}

// Forget unlearns a memory of the tenant in ctx that was updated or
// deleted. Until the tenant is loaded it does nothing.
func (s *Service) Forget(ctx context.Context, category, text string) {
	if tenant := engram.TenantFromContext(ctx); s.router.Loaded(tenant) {
		s.router.Forget(tenant, category, text)
	}
}

// load observes the tenant's labelled memories once. Concurrent first
// queries of one tenant wait for a single load; the memories are collected
// before any is observed, so a failed load leaves the model untouched.
func (s *Service) load(ctx context.Context, tenant string) error {
	if s.src == nil || s.router.Loaded(tenant) {
		return nil
	}
	s.mu.Lock()
	l := s.loading[tenant]
	if l == nil {
		l = &sync.Mutex{}
		s.loading[tenant] = l
	}
	s.mu.Unlock()

	l.Lock()
	defer l.Unlock()
	if s.router.Loaded(tenant) {
		return nil
	}
	type labelled struct{ category, text string }
	var docs []labelled
	err := s.src.EachLabelled(ctx, func(category, text string) error {
		docs = append(docs, labelled{category, text})
		return nil
	})
	if err != nil {
		return fmt.Errorf("router: load labelled memories: %w", err)
	}
	for _, d := range docs {
		s.router.Observe(tenant, d.category, d.text)
	}
	s.router.MarkLoaded(tenant)
	s.mu.Lock()
	delete(s.loading, tenant)
	s.mu.Unlock()
	return nil
}
