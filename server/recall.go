package server

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
)

// Recaller is what the recall endpoints need.
type Recaller interface {
	engram.RecallService
	ReadBlock(ctx context.Context, agentID string, tags []string, limit int) (string, []engram.RecallItem, int, error)
	Boot(ctx context.Context, agentID string, limit int) (*engram.Boot, error)
}

type routeRequest struct {
	Query string `json:"query"`
}

func (s *Server) handleRoute(c *gin.Context) {
	var req routeRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	route, err := s.cfg.Router.RouteQuery(c.Request.Context(), req.Query)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, route)
}

func (s *Server) handleRecall(c *gin.Context) {
	var req engram.RecallRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	rec, err := s.cfg.Recall.Recall(c.Request.Context(), req)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, rec)
}

type contextResponse struct {
	Context    string        `json:"context"`
	Items      []contextItem `json:"items"`
	TokensUsed int           `json:"tokens_used"`
	TokenLimit int           `json:"token_limit"`
}

// contextItem is a line of the read block; unlike a recall item it has no
// score, since the block is ordered by time, importance and tags.
type contextItem struct {
	ID          string `json:"id"`
	Key         string `json:"key,omitempty"`
	Category    string `json:"category"`
	Version     int64  `json:"version"`
	Text        string `json:"text"`
	Tokens      int    `json:"tokens"`
	UsedSummary bool   `json:"used_summary,omitempty"`
}

// handleContext serves the default read block. token_limit is required;
// tags is a comma-separated list.
func (s *Server) handleContext(c *gin.Context) {
	if err := queryParams(c, "token_limit", "tags", "agent_id", "user_id"); err != nil {
		writeError(c, err)
		return
	}
	limit, err := intParam(c, "token_limit")
	if err != nil {
		writeError(c, err)
		return
	}
	var tags []string
	for _, t := range strings.Split(c.Query("tags"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	text, items, used, err := s.cfg.Recall.ReadBlock(userContext(c), c.Query("agent_id"), tags, limit)
	if err != nil {
		writeError(c, err)
		return
	}
	out := make([]contextItem, len(items))
	for i, it := range items {
		out[i] = contextItem{ID: it.ID, Key: it.Key, Category: it.Category, Version: it.Version, Text: it.Text,
			Tokens: it.Tokens, UsedSummary: it.UsedSummary}
	}
	c.JSON(http.StatusOK, contextResponse{Context: text, Items: out, TokensUsed: used, TokenLimit: limit})
}

func (s *Server) handleBoot(c *gin.Context) {
	if err := queryParams(c, "token_limit", "agent_id", "user_id"); err != nil {
		writeError(c, err)
		return
	}
	limit := s.defaultBudget()
	var err error
	if _, ok := c.GetQuery("token_limit"); ok {
		if limit, err = intParam(c, "token_limit"); err != nil {
			writeError(c, err)
			return
		}
	}
	b, err := s.cfg.Recall.Boot(userContext(c), c.Query("agent_id"), limit)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, b)
}

// defaultBudget is the token_limit of a /v1/boot that names none.
func (s *Server) defaultBudget() int {
	if s.cfg.Limits.MaxBudget <= 0 {
		return engram.DefaultBudget(math.MaxInt)
	}
	return engram.DefaultBudget(s.cfg.Limits.MaxBudget)
}

// limitParam is the limit of a list: 0 (the store's default) when the
// query names none, else EINVALID unless a positive integer.
func limitParam(c *gin.Context) (int, error) {
	v, ok := c.GetQuery("limit")
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, engram.Errorf(engram.EINVALID, "limit must be a positive integer")
	}
	return n, nil
}

func intParam(c *gin.Context, name string) (int, error) {
	v, ok := c.GetQuery(name)
	if !ok {
		return 0, engram.Errorf(engram.EINVALID, "%s is required", name)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, engram.Errorf(engram.EINVALID, "%s must be an integer", name)
	}
	return n, nil
}
