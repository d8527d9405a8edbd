// Package reflections is engram's L3 layer (DESIGN §5): the reflector
// groups a tenant's live L2 memories (by category, then subcategory or
// tag) and writes one Markdown reflection per group — what is known, what
// worked, what failed or misled, contradictions, open questions — each
// claim citing the memories and versions it rests on. The writer is
// extractive and deterministic by default; with an OpenAI-compatible chat
// endpoint configured it is abstractive, checked, and falls back to the
// extractive writer on any failure. A group is written again only when its
// members or their versions changed.
//
// Reflections are rows in the store (versioned) and files under
// <dir>/<tenant>/<category>/<slug>.md. The package depends on the root's
// types and the small Store interface below; cmd/engram wires it.
package reflections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/engram-memory/engram"
)

// Store is what the reflector needs from the store.
type Store interface {
	FindMemories(ctx context.Context, f engram.MemoryFilter) (*engram.MemoryPage, error)
	SaveReflection(ctx context.Context, r *engram.Reflection) (*engram.Reflection, bool, error)
	FindReflectionByGroup(ctx context.Context, group string) (*engram.Reflection, error)
	FindReflectionByID(ctx context.Context, id string) (*engram.Reflection, error)
	FindReflectionVersions(ctx context.Context, id string) ([]*engram.Reflection, error)
	FindReflections(ctx context.Context, f engram.ReflectionFilter) (*engram.ReflectionPage, error)
}

// Config configures the reflector.
type Config struct {
	Categories []string // the configured L2 categories
	MinGroup   int      // members a group needs (3)
	// Dir receives the reflection files (<data>/reflections); "" writes
	// none.
	Dir string
	// Chat, when set, writes abstractive reflections.
	Chat *Chat
}

// Service implements engram.ReflectionService.
type Service struct {
	store Store
	cfg   Config
	log   *slog.Logger
}

var _ engram.ReflectionService = (*Service)(nil)

// New returns the reflector.
func New(st Store, cfg Config, log *slog.Logger) *Service {
	if cfg.MinGroup < 1 {
		cfg.MinGroup = 3
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: st, cfg: cfg, log: log}
}

// pageSize is how many memories one read of the store returns.
const pageSize = 500

// Reflect implements engram.ReflectionService.
func (s *Service) Reflect(ctx context.Context, req engram.ReflectRequest) (*engram.ReflectResult, error) {
	filter := engram.MemoryFilter{Limit: pageSize}
	if req.Category != "" {
		if !slices.Contains(s.cfg.Categories, req.Category) {
			return nil, engram.Errorf(engram.EINVALID, "unknown category %q", req.Category)
		}
		filter.Category = &req.Category
	}
	var ms []*engram.Memory
	for {
		page, err := s.store.FindMemories(ctx, filter)
		if err != nil {
			return nil, err
		}
		ms = append(ms, page.Items...)
		if page.NextCursor == "" {
			break
		}
		filter.Cursor = page.NextCursor
	}
	groups := UserGroups(ms, s.cfg.MinGroup)
	res := &engram.ReflectResult{Groups: len(groups), Written: []engram.ReflectOutcome{}, Skipped: []engram.ReflectOutcome{},
		Failed: []engram.ReflectOutcome{}}
	for i, g := range groups {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		engram.ReportProgress(ctx, i, len(groups))
		out, written, err := s.reflectGroup(ctx, g)
		switch {
		case err != nil:
			s.log.Warn("reflection failed", "group", g.Key, "err", err)
			res.Failed = append(res.Failed, engram.ReflectOutcome{Group: g.Key, Reason: engram.ErrorMessage(err)})
		case written:
			res.Written = append(res.Written, *out)
		default:
			res.Skipped = append(res.Skipped, *out)
		}
	}
	engram.ReportProgress(ctx, len(groups), len(groups))
	return res, nil
}

// reflectGroup writes one group's reflection unless the stored one has
// the same fingerprint (and, with a chat writer, did not fall back).
func (s *Service) reflectGroup(ctx context.Context, g Group) (*engram.ReflectOutcome, bool, error) {
	writer := ExtractiveWriter
	if s.cfg.Chat != nil {
		writer = s.cfg.Chat.Name()
	}
	fp := fingerprint(g, writer)
	prev, err := s.store.FindReflectionByGroup(ctx, g.Key)
	switch {
	case err == nil && prev.Fingerprint == fp && (s.cfg.Chat == nil || prev.Fallback == ""):
		out := &engram.ReflectOutcome{Group: g.Key, ID: prev.ID, Version: prev.Version, Writer: prev.Writer, Reason: "unchanged"}
		if err := s.ensureFile(ctx, g, prev); err != nil {
			s.log.Warn("reflection file not written; the store has it", "group", g.Key, "err", err)
			out.Reason = "file not written: " + err.Error()
		}
		return out, false, nil
	case err != nil && engram.ErrorCode(err) != engram.ENOTFOUND:
		return nil, false, err
	}
	r := &engram.Reflection{Group: g.Key, Category: g.Category, UserID: g.UserID, Title: g.Title(), Fingerprint: fp, Writer: ExtractiveWriter}
	for _, m := range g.Members {
		r.Members = append(r.Members, engram.MemoryRef{ID: m.ID, Version: m.Version})
	}
	if s.cfg.Chat != nil {
		if text, cited, err := s.cfg.Chat.Write(ctx, g); err == nil {
			r.Markdown, r.Cited, r.Writer = text, cited, writer
		} else {
			r.Fallback = err.Error()
		}
	}
	if r.Markdown == "" {
		r.Markdown, r.Cited = Extract(g)
	}
	if prev != nil && prev.Fallback != "" && r.Fallback != "" && prev.Fingerprint == fp {
		// The chat writer failed again on an unchanged group: the stored
		// extractive text stands; say why.
		return &engram.ReflectOutcome{Group: g.Key, ID: prev.ID, Version: prev.Version, Writer: prev.Writer, Reason: r.Fallback}, false, nil
	}
	saved, written, err := s.store.SaveReflection(ctx, r)
	if err != nil {
		return nil, false, err
	}
	out := &engram.ReflectOutcome{Group: g.Key, ID: saved.ID, Version: saved.Version, Writer: saved.Writer, Reason: saved.Fallback}
	if written {
		if err := s.writeFile(ctx, g, saved); err != nil {
			s.log.Warn("reflection file not written; the store has it", "group", g.Key, "err", err)
			out.Reason = "file not written: " + err.Error()
		}
	}
	return out, written, nil
}

// writeFile writes the reflection to <dir>/<tenant>/<category>/<slug>.md,
// through a temporary file and a rename, so a reader never sees half of it.
func (s *Service) writeFile(ctx context.Context, g Group, r *engram.Reflection) error {
	if s.cfg.Dir == "" {
		return nil
	}
	path := s.File(engram.TenantFromContext(ctx), g)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".reflection-*")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(r.Markdown)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ensureFile writes the stored reflection's file when it is missing: a
// run stopped between storing a reflection and writing its file (a kill)
// leaves the file to the next run, which finds the group unchanged.
func (s *Service) ensureFile(ctx context.Context, g Group, r *engram.Reflection) error {
	if s.cfg.Dir == "" {
		return nil
	}
	if _, err := os.Stat(s.File(engram.TenantFromContext(ctx), g)); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return s.writeFile(ctx, g, r)
}

// File is where a group's reflection is written. Tenant ids and category
// names are safe path segments (engram.ValidName); the slug is made so; a
// user id (engram.CheckUserID: letters, digits, . _ : - without "..") is
// one. A user's groups go under users/<user id>/.
func (s *Service) File(tenantID string, g Group) string {
	if g.UserID != "" {
		return filepath.Join(s.cfg.Dir, tenantID, "users", g.UserID, g.Category, g.Slug()+".md")
	}
	return filepath.Join(s.cfg.Dir, tenantID, g.Category, g.Slug()+".md")
}

// FindReflections implements engram.ReflectionService.
func (s *Service) FindReflections(ctx context.Context, f engram.ReflectionFilter) (*engram.ReflectionPage, error) {
	return s.store.FindReflections(ctx, f)
}

// FindReflectionByID implements engram.ReflectionService: the current
// version, rendered.
func (s *Service) FindReflectionByID(ctx context.Context, id string) (*engram.Reflection, error) {
	r, err := s.store.FindReflectionByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.HTML, err = RenderHTML(r.Markdown); err != nil {
		return nil, fmt.Errorf("reflections: %w", err)
	}
	return r, nil
}

// FindReflectionVersions implements engram.ReflectionService.
func (s *Service) FindReflectionVersions(ctx context.Context, id string) ([]*engram.Reflection, error) {
	return s.store.FindReflectionVersions(ctx, id)
}
