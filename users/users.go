// Package users erases an end user of a tenant (DELETE /v1/users/{id},
// docs/users.md): the store's rows first, in one transaction, then what
// lives outside the database and was made from them — the lexical index
// and its snapshot, the file mirror, the reflection files.
package users

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/engram-memory/engram"
)

// Store erases the rows (store.DB).
type Store interface {
	ForgetUser(ctx context.Context, userID string) (*engram.ForgetResult, []string, error)
	FindTenants(ctx context.Context) ([]*engram.Tenant, error)
}

// Index is the lexical index (index.Index), or any cache of a tenant's
// memories that keeps their words and can drop them (router.Service).
type Index interface {
	Forget(ctx context.Context) error
}

// Mirror is the file mirror: Rebuild recreates a tenant's files from the
// store. cmd/engram adapts journal.Mirror to it, so this package does not
// import a sibling.
type Mirror interface {
	Rebuild(ctx context.Context, tenant *engram.Tenant) error
}

// Config says where the files are and which parts run; nil parts are off.
type Config struct {
	Index Index
	// Router is the routing model, whose counts and snapshot file hold
	// words of the tenant's memories; it is dropped like the index.
	Router      Index
	Mirror      Mirror
	MirrorDir   string // the mirror's directory, one subdirectory per tenant name
	Reflections engram.ReflectionService
	// ReflectionsDir is the reflections' directory, one subdirectory per
	// tenant id.
	ReflectionsDir string
}

// Service implements engram.UserService.
type Service struct {
	store Store
	cfg   Config
	log   *slog.Logger
}

var _ engram.UserService = (*Service)(nil)

// New returns the service.
func New(st Store, cfg Config, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: st, cfg: cfg, log: log}
}

// ForgetUser implements engram.UserService. Once the store committed, the
// files follow: the index drops the tenant (and its snapshot); reflection
// files that cite a forgotten memory are removed and the tenant reflected
// again, so that its groups are written without them; the mirror is
// rebuilt from the event log, which no longer holds the user's events. A
// failure there is returned (the rows are gone already; a retry finds no
// rows and redoes the files).
func (s *Service) ForgetUser(ctx context.Context, userID string) (*engram.ForgetResult, error) {
	if err := engram.CheckID("user id", userID); err != nil {
		return nil, err
	}
	res, ids, err := s.store.ForgetUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	tenantID := engram.TenantFromContext(ctx)
	for _, cache := range []Index{s.cfg.Index, s.cfg.Router} {
		if cache != nil {
			if err := cache.Forget(ctx); err != nil {
				return nil, err
			}
		}
	}
	if s.cfg.ReflectionsDir != "" {
		n, err := removeCiting(filepath.Join(s.cfg.ReflectionsDir, tenantID), ids, userID)
		if err != nil {
			return nil, fmt.Errorf("users: reflection files: %w", err)
		}
		res.Rewritten = n
	}
	if s.cfg.Reflections != nil && (res.Reflections > 0 || res.Rewritten > 0) {
		out, err := s.cfg.Reflections.Reflect(ctx, engram.ReflectRequest{})
		if err != nil {
			return nil, err
		}
		res.Rewritten = int64(len(out.Written))
	}
	if s.cfg.Mirror != nil {
		tenant, err := s.tenant(ctx, tenantID)
		if err != nil {
			return nil, err
		}
		if s.cfg.MirrorDir != "" {
			if res.MirrorFiles, err = countCiting(filepath.Join(s.cfg.MirrorDir, tenant.Name), ids, userID); err != nil {
				return nil, fmt.Errorf("users: mirror files: %w", err)
			}
		}
		if err := s.cfg.Mirror.Rebuild(ctx, tenant); err != nil {
			return nil, err
		}
	}
	s.log.Info("user forgotten", "tenant", tenantID, "memories", res.Memories, "sessions", res.Sessions)
	return res, nil
}

func (s *Service) tenant(ctx context.Context, id string) (*engram.Tenant, error) {
	ts, err := s.store.FindTenants(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if t.ID == id {
			return t, nil
		}
	}
	return nil, engram.Errorf(engram.ENOTFOUND, "tenant %s not found", id)
}

// removeCiting removes the files under dir that name one of the ids or
// the user, and returns how many.
func removeCiting(dir string, ids []string, user string) (int64, error) {
	var n int64
	err := eachCiting(dir, ids, user, func(path string) error {
		n++
		return os.Remove(path)
	})
	return n, err
}

// countCiting counts the files under dir that name one of the ids or the
// user (the mirror's rebuild replaces them all).
func countCiting(dir string, ids []string, user string) (int64, error) {
	var n int64
	err := eachCiting(dir, ids, user, func(string) error { n++; return nil })
	return n, err
}

func eachCiting(dir string, ids []string, user string, fn func(path string) error) error {
	needles := make([][]byte, 0, len(ids)+1)
	for _, id := range ids {
		needles = append(needles, []byte(id))
	}
	needles = append(needles, []byte(`"user_id":"`+user+`"`))
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, nd := range needles {
			if bytes.Contains(b, nd) {
				return fn(path)
			}
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
