package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/wire"
)

// PairEncoder writes export lines in one format (learning.Encoder).
type PairEncoder interface {
	Pair(p *engram.Pair) error
	Unpaired(u *engram.Unpaired) error
}

// Exporter returns an encoder writing format to w, whether the format is
// paired, or EINVALID for an unknown format.
type Exporter func(w io.Writer, format string) (PairEncoder, bool, error)

type interactionRequest struct {
	Prompt    json.RawMessage `json:"prompt"` // a string, or a list of {"role","content"} messages
	Response  string          `json:"response"`
	RecallID  string          `json:"recall_id"`
	SessionID string          `json:"session_id"`
	TurnID    string          `json:"turn_id"`
	Model     string          `json:"model"`
	UserID    string          `json:"user_id"`
}

func (s *Server) handleCreateInteraction(c *gin.Context) {
	var req interactionRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	in := &engram.Interaction{Response: req.Response, RecallID: req.RecallID, SessionID: req.SessionID, TurnID: req.TurnID, Model: req.Model, UserID: req.UserID}
	switch {
	case len(req.Prompt) == 0 || string(req.Prompt) == "null":
		writeError(c, engram.Errorf(engram.EINVALID, "prompt is required: a string or a list of messages"))
		return
	case req.Prompt[0] == '"':
		_ = json.Unmarshal(req.Prompt, &in.Prompt)
	case req.Prompt[0] == '[':
		if err := wire.Decode(req.Prompt, &in.Messages, s.cfg.Limits.MaxJSONDepth); err != nil || len(in.Messages) == 0 {
			writeError(c, engram.Errorf(engram.EINVALID, "prompt: want a string or a non-empty list of {\"role\",\"content\"} messages"))
			return
		}
	default:
		writeError(c, engram.Errorf(engram.EINVALID, "prompt: want a string or a list of messages"))
		return
	}
	out, err := s.cfg.Feedback.CreateInteraction(c.Request.Context(), in)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusCreated, out)
}

// feedbackRequest uses pointers where "absent" and "zero" differ: a
// rating of 0 and an empty correction are errors, not omissions.
type feedbackRequest struct {
	InteractionID  string  `json:"interaction_id"`
	RecallID       string  `json:"recall_id"`
	MemoryID       string  `json:"memory_id"`
	Thumb          *string `json:"thumb"`
	Rating         *int    `json:"rating"`
	Reason         string  `json:"reason"`
	Correction     *string `json:"correction"`
	Rater          string  `json:"rater"`
	IdempotencyKey string  `json:"idempotency_key"`
	// UserID is the end user giving the feedback; a correction becomes a
	// memory of that user. Absent: the user of the rated recall.
	UserID string `json:"user_id"`
}

func (s *Server) handleFeedback(c *gin.Context) {
	var req feedbackRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	in := engram.FeedbackInput{InteractionID: req.InteractionID, RecallID: req.RecallID, MemoryID: req.MemoryID,
		Reason: req.Reason, Rater: req.Rater, IdempotencyKey: req.IdempotencyKey, UserID: req.UserID}
	if req.Thumb != nil {
		if *req.Thumb == "" {
			writeError(c, engram.Errorf(engram.EINVALID, "thumb must be up or down"))
			return
		}
		in.Thumb = *req.Thumb
	}
	if req.Rating != nil {
		if *req.Rating < 1 || *req.Rating > 5 {
			writeError(c, engram.Errorf(engram.EINVALID, "rating must be an integer from 1 to 5"))
			return
		}
		in.Rating = *req.Rating
	}
	if req.Correction != nil {
		if *req.Correction == "" {
			writeError(c, engram.Errorf(engram.EINVALID, "correction must not be empty; omit it instead"))
			return
		}
		in.Correction = *req.Correction
	}
	ctx := engram.NewContextWithUser(c.Request.Context(), req.UserID)
	if s.respondAsync(c) {
		st, err := s.cfg.Feedback.QueueFeedback(ctx, in)
		if err != nil {
			writeError(c, err)
			return
		}
		c.Header("Preference-Applied", "respond-async")
		status := http.StatusAccepted
		if st.Status == engram.FeedbackApplied {
			status = http.StatusOK
		}
		c.JSON(status, st)
		return
	}
	res, err := s.cfg.Feedback.SubmitFeedback(ctx, in)
	if err != nil {
		writeError(c, err)
		return
	}
	status := http.StatusCreated
	if res.Replayed {
		status = http.StatusOK
	}
	c.JSON(status, res)
}

// respondAsync tells a feedback to acknowledge once queued: the server's
// feedback.async, or the request's Prefer: respond-async (RFC 7240).
func (s *Server) respondAsync(c *gin.Context) bool {
	if s.cfg.AsyncFeedback {
		return true
	}
	for _, v := range c.Request.Header.Values("Prefer") {
		for _, p := range strings.Split(v, ",") {
			if name, _, _ := strings.Cut(p, ";"); strings.EqualFold(strings.TrimSpace(name), "respond-async") {
				return true
			}
		}
	}
	return false
}

// handleFeedbackStatus reports a feedback: pending, or applied with what
// it did.
func (s *Server) handleFeedbackStatus(c *gin.Context) {
	st, err := s.cfg.Feedback.FeedbackStatus(c.Request.Context(), c.Param("id"))
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, st)
}

// nextCursorTrailer carries the cursor of a cut export: an export
// streams, so the cursor is known only after the last line.
const nextCursorTrailer = "Engram-Next-Cursor"

// handlePairs streams preference data as JSON Lines. Everything that can
// be wrong with the request is checked before the first line; a failure
// mid-stream aborts the connection, so a client never mistakes a cut
// file for a whole one.
func (s *Server) handlePairs(c *gin.Context) {
	if err := queryParams(c, "format", "cursor", "since", "until", "category", "user_id", "min_margin", "limit"); err != nil {
		writeError(c, err)
		return
	}
	var f engram.PairFilter
	f.Cursor = c.Query("cursor")
	for name, dst := range map[string]**time.Time{"since": &f.Since, "until": &f.Until} {
		if v, ok := c.GetQuery(name); ok {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				writeError(c, engram.Errorf(engram.EINVALID, "%s must be an RFC 3339 time", name))
				return
			}
			*dst = &t
		}
	}
	if v, ok := c.GetQuery("category"); ok {
		f.Category = &v
	}
	if v, ok := c.GetQuery("user_id"); ok { // exactly this user's, as GET /v1/memories
		f.UserID = &v
	}
	if v, ok := c.GetQuery("min_margin"); ok {
		m, err := strconv.ParseFloat(v, 64)
		if err != nil || !(m >= 0 && m <= 2) { // NaN fails both
			writeError(c, engram.Errorf(engram.EINVALID, "min_margin must be a number from 0 to 2"))
			return
		}
		f.MinMargin = m
	}
	var err error
	if f.Limit, err = limitParam(c); err != nil {
		writeError(c, err)
		return
	}
	format := c.Query("format")
	if format == "" {
		writeError(c, engram.Errorf(engram.EINVALID, "format is required: trl, trl-conversational, trl-unpaired or openai"))
		return
	}
	buf := bufio.NewWriterSize(c.Writer, 64<<10)
	enc, paired, err := s.cfg.Export(buf, format)
	if err != nil {
		writeError(c, err)
		return
	}
	// Validate the cursor before the status line goes out.
	probe := f
	probe.Limit = 1
	var perr error
	if paired {
		_, perr = s.cfg.Feedback.EachPair(c.Request.Context(), probe, func(*engram.Pair) error { return errStop })
	} else {
		_, perr = s.cfg.Feedback.EachUnpaired(c.Request.Context(), probe, func(*engram.Unpaired) error { return errStop })
	}
	if perr != nil && perr != errStop {
		writeError(c, perr)
		return
	}
	c.Header("Content-Type", "application/x-ndjson; charset=utf-8")
	c.Header("Trailer", nextCursorTrailer)
	c.Status(http.StatusOK)
	var next string
	if paired {
		next, err = s.cfg.Feedback.EachPair(c.Request.Context(), f, enc.Pair)
	} else {
		next, err = s.cfg.Feedback.EachUnpaired(c.Request.Context(), f, enc.Unpaired)
	}
	if err == nil {
		err = buf.Flush()
	}
	if err != nil {
		s.cfg.Logger.Error("export failed mid-stream", "err", err, "request_id", c.GetString("request_id"))
		panic(http.ErrAbortHandler)
	}
	c.Writer.Header().Set(nextCursorTrailer, next)
}
