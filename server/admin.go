package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/wire"
)

// Admin is what the admin API needs: tenants and keys, their settings,
// and each tenant's lifecycle.
type Admin interface {
	engram.AdminService
	engram.LifecycleService
}

// adminRoutes mounts /v1/admin/... when an admin key is configured.
func (s *Server) adminRoutes() {
	a := s.engine.Group("/v1/admin", s.slowGuessing, s.authenticateAdmin, strictQuery)
	a.POST("/tenants", s.handleCreateTenant)
	a.GET("/tenants", s.handleListTenants)
	a.GET("/tenants/:tenant", s.handleGetTenant)
	a.PATCH("/tenants/:tenant", s.handlePatchTenant)
	a.POST("/tenants/:tenant/keys", s.handleCreateKey)
	a.GET("/tenants/:tenant/keys", s.handleListKeys)
	a.POST("/tenants/:tenant/prune", s.handleAdminPrune)
	a.POST("/tenants/:tenant/reset", s.handleAdminReset)
	a.GET("/tenants/:tenant/export", s.handleAdminExport)
	a.POST("/tenants/:tenant/import", s.handleAdminImport)
	a.PATCH("/keys/:id", s.handlePatchKey)
	a.DELETE("/keys/:id", s.handleRevokeKey)
}

// authenticateAdmin admits the admin key only, compared in constant time
// (as SHA-256 sums, so that its length does not show either). A tenant
// key is 403 (it is a key, but not this one); anything else is 401 and
// counts towards the slowdown of guessing.
func (s *Server) authenticateAdmin(c *gin.Context) {
	scheme, secret, ok := strings.Cut(c.GetHeader("Authorization"), " ")
	secret = strings.TrimSpace(secret)
	if !ok || !strings.EqualFold(scheme, "Bearer") || secret == "" {
		writeError(c, engram.Errorf(engram.EUNAUTHORIZED, "missing admin key; send Authorization: Bearer <admin key>"))
		return
	}
	got, want := sha256.Sum256([]byte(secret)), sha256.Sum256([]byte(s.cfg.AdminKey))
	if subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
		c.Next()
		return
	}
	if _, err := s.cfg.Auth.Authenticate(c.Request.Context(), secret); err == nil {
		writeError(c, engram.Errorf(wire.EFORBIDDEN, "a tenant key may not use the admin API"))
		return
	}
	writeError(c, engram.Errorf(engram.EUNAUTHORIZED, "invalid admin key"))
}

type createTenantRequest struct {
	Name string `json:"name"`
}

func (s *Server) handleCreateTenant(c *gin.Context) {
	var req createTenantRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	t, err := s.cfg.Admin.CreateTenant(c.Request.Context(), req.Name)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusCreated, t)
}

func (s *Server) handleListTenants(c *gin.Context) {
	ts, err := s.cfg.Admin.FindTenantInfos(c.Request.Context())
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"items": ts})
}

func (s *Server) handleGetTenant(c *gin.Context) {
	t, err := s.cfg.Admin.FindTenantInfo(c.Request.Context(), c.Param("tenant"))
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, t)
}

type patchTenantRequest struct {
	Quotas   *engram.TenantQuotas `json:"quotas"`
	Withhold *string              `json:"withhold"`
	Gate     *string              `json:"gate"`
	GateMode *string              `json:"gate_mode"`
}

func (s *Server) handlePatchTenant(c *gin.Context) {
	var req patchTenantRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	u := engram.TenantUpdate{Withhold: req.Withhold, Gate: req.Gate, GateMode: req.GateMode}
	if req.Quotas != nil {
		u.Quotas = *req.Quotas
	}
	t, err := s.cfg.Admin.UpdateTenant(c.Request.Context(), c.Param("tenant"), u)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, t)
}

type createKeyRequest struct {
	Name      string  `json:"name"`
	Clearance *string `json:"clearance"`
	MaskPII   *bool   `json:"mask_pii"`
}

// handleCreateKey makes a key; its secret is in this answer only.
func (s *Server) handleCreateKey(c *gin.Context) {
	var req createKeyRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	if req.Clearance != nil && !engram.ValidSecurityLevel(*req.Clearance) {
		writeError(c, engram.Errorf(engram.EINVALID, "clearance must be public, internal, confidential or secret"))
		return
	}
	if len(req.Name) > 64 {
		writeError(c, engram.Errorf(engram.EINVALID, "name must be at most 64 bytes"))
		return
	}
	ctx := c.Request.Context()
	k, secret, err := s.cfg.Auth.CreateAPIKey(ctx, c.Param("tenant"), req.Name)
	if err != nil {
		writeError(c, err)
		return
	}
	if req.Clearance != nil || req.MaskPII != nil {
		if k, err = s.cfg.Admin.UpdateAPIKey(ctx, k.ID, engram.KeyUpdate{Clearance: req.Clearance, MaskPII: req.MaskPII}); err != nil {
			writeError(c, err)
			return
		}
	}
	c.JSON(http.StatusCreated, gin.H{"key": k, "secret": secret})
}

func (s *Server) handleListKeys(c *gin.Context) {
	ctx := c.Request.Context()
	if _, err := s.cfg.Admin.FindTenantInfo(ctx, c.Param("tenant")); err != nil {
		writeError(c, err)
		return
	}
	ks, err := s.cfg.Auth.FindAPIKeys(ctx, c.Param("tenant"))
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"items": ks})
}

type patchKeyRequest struct {
	Clearance *string `json:"clearance"`
	MaskPII   *bool   `json:"mask_pii"`
}

func (s *Server) handlePatchKey(c *gin.Context) {
	var req patchKeyRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	k, err := s.cfg.Admin.UpdateAPIKey(c.Request.Context(), c.Param("id"), engram.KeyUpdate{Clearance: req.Clearance, MaskPII: req.MaskPII})
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, k)
}

func (s *Server) handleRevokeKey(c *gin.Context) {
	if err := s.cfg.Auth.RevokeAPIKey(c.Request.Context(), c.Param("id")); err != nil {
		writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// adminTenant puts the named tenant into the request's context, as a
// tenant key would (with full read rights), for the lifecycle verbs.
func (s *Server) adminTenant(c *gin.Context) bool {
	t, err := s.cfg.Admin.FindTenantInfo(c.Request.Context(), c.Param("tenant"))
	if err != nil {
		writeError(c, err)
		return false
	}
	c.Set("tenant_id", t.ID)
	ctx := engram.NewContextWithTenant(c.Request.Context(), t.ID)
	ctx = engram.NewContextWithActor(ctx, engram.Actor{KeyID: "admin", RequestID: c.GetString("request_id")})
	c.Request = c.Request.WithContext(ctx)
	return true
}

type pruneRequest struct {
	Action         string   `json:"action"`
	Before         *string  `json:"before"`
	OlderThanDays  *float64 `json:"older_than_days"`
	Category       *string  `json:"category"`
	BelowRetention *float64 `json:"below_retention"`
	UserID         *string  `json:"user_id"`
	DryRun         bool     `json:"dry_run"`
}

// pruneFilter reads a prune request: before is an RFC 3339 time,
// older_than_days the same as a number of days back from now.
func pruneFilter(req pruneRequest, now time.Time) (engram.PruneFilter, error) {
	f := engram.PruneFilter{Action: req.Action, Category: req.Category, BelowRetention: req.BelowRetention, UserID: req.UserID,
		DryRun: req.DryRun}
	switch {
	case req.Before != nil && req.OlderThanDays != nil:
		return f, engram.Errorf(engram.EINVALID, "give before or older_than_days, not both")
	case req.Before != nil:
		t, err := time.Parse(time.RFC3339, *req.Before)
		if err != nil {
			return f, engram.Errorf(engram.EINVALID, "before must be an RFC 3339 time")
		}
		f.Before = &t
	case req.OlderThanDays != nil:
		if !(*req.OlderThanDays >= 0) {
			return f, engram.Errorf(engram.EINVALID, "older_than_days must not be negative")
		}
		t := now.Add(-time.Duration(*req.OlderThanDays * float64(24*time.Hour)))
		f.Before = &t
	}
	return f, f.Validate()
}

func (s *Server) handleAdminPrune(c *gin.Context) {
	var req pruneRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	f, err := pruneFilter(req, time.Now())
	if err != nil {
		writeError(c, err)
		return
	}
	if !s.adminTenant(c) {
		return
	}
	res, err := s.cfg.Admin.PruneMemories(c.Request.Context(), f)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

type resetRequest struct {
	Confirm string `json:"confirm"`
}

// handleAdminReset empties a tenant; the body must name it again.
func (s *Server) handleAdminReset(c *gin.Context) {
	var req resetRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	if req.Confirm != c.Param("tenant") {
		writeError(c, engram.Errorf(engram.EINVALID, "to reset tenant %q, send {\"confirm\": %q}", c.Param("tenant"), c.Param("tenant")))
		return
	}
	if !s.adminTenant(c) {
		return
	}
	res, err := s.cfg.Admin.ResetTenant(c.Request.Context())
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}
