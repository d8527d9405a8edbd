package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
)

// jobAccepted is the answer of a request that became a job.
type jobAccepted struct {
	JobID     string `json:"job_id"`
	Status    string `json:"status"`
	StatusURL string `json:"status_url"`
}

// accepted answers 202 for a queued job, with Location at its status.
func accepted(c *gin.Context, j *engram.Job) {
	url := "/v1/jobs/" + j.ID
	c.Header("Location", url)
	c.JSON(http.StatusAccepted, jobAccepted{JobID: j.ID, Status: j.Status, StatusURL: url})
}

// handleGetJob answers one job of the tenant: GET /v1/jobs/{id}.
func (s *Server) handleGetJob(c *gin.Context) {
	if err := queryParams(c); err != nil {
		writeError(c, err)
		return
	}
	j, err := s.cfg.Jobs.FindJobByID(c.Request.Context(), c.Param("id"))
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, j)
}

// handleListJobs answers the tenant's jobs, newest first: GET /v1/jobs
// with optional status, limit and cursor.
func (s *Server) handleListJobs(c *gin.Context) {
	if err := queryParams(c, "status", "limit", "cursor"); err != nil {
		writeError(c, err)
		return
	}
	f := engram.JobFilter{Cursor: c.Query("cursor")}
	if v, ok := c.GetQuery("status"); ok {
		f.Status = &v
	}
	var err error
	if f.Limit, err = limitParam(c); err != nil {
		writeError(c, err)
		return
	}
	page, err := s.cfg.Jobs.FindJobs(c.Request.Context(), f)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, listResponse[*engram.Job]{Items: page.Items, NextCursor: page.NextCursor})
}
