package engram

import (
	"context"
	"encoding/json"
	"time"
)

// Job kinds: work that runs off the request path on a large tenant.
const (
	JobReflect = "reflect" // the reflector over the tenant (ReflectRequest)
	JobSleep   = "sleep"   // one sleep cycle of the tenant
)

// Job statuses. A job is queued, then running under one server's lease;
// a server that dies leaves its lease to run out, and another server (or
// the same one restarted) runs the job again from the start. Every step a
// job's kind writes is its own transaction and idempotent, so a re-run
// completes what the dead one began and never writes a thing twice.
const (
	JobQueued  = "queued"
	JobRunning = "running"
	JobDone    = "done"
	JobFailed  = "failed"
)

// JobProgress is how far a job got: done of total steps (for reflect, the
// groups written or found unchanged of the groups to reflect). Total is 0
// until the job knows it.
type JobProgress struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

// Job is one piece of long work of a tenant, stored so that any server
// can run it and any server can report it.
type Job struct {
	ID       string          `json:"id"`
	Kind     string          `json:"kind"`
	Status   string          `json:"status"`
	Request  json.RawMessage `json:"request,omitempty"`
	Progress JobProgress     `json:"progress"`
	// Attempts counts the runs begun: more than one means a server died
	// (or lost its lease) while running it.
	Attempts   int             `json:"attempts"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      string          `json:"error,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	StartedAt  *time.Time      `json:"started_at,omitempty"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
}

// Finished reports a job that is done or failed.
func (j *Job) Finished() bool { return j.Status == JobDone || j.Status == JobFailed }

// JobFilter selects the jobs of the caller's tenant, newest first.
type JobFilter struct {
	Status *string
	Limit  int
	Cursor string
}

// JobPage is one page of FindJobs.
type JobPage struct {
	Items      []*Job
	NextCursor string
}

// JobService starts long work of the tenant in the context and reports it.
// Reflect and Sleep run inline on a small tenant (the result, no job) and
// as a job on a large one (the queued job, no result).
type JobService interface {
	// Reflect runs or queues the reflector. EINVALID for an unknown
	// category.
	Reflect(ctx context.Context, req ReflectRequest) (*ReflectResult, *Job, error)
	// Sleep runs or queues one sleep cycle.
	Sleep(ctx context.Context) (*SleepResult, *Job, error)
	// FindJobByID returns one job of the tenant. ENOTFOUND.
	FindJobByID(ctx context.Context, id string) (*Job, error)
	// FindJobs returns a page of the tenant's jobs. EINVALID for a bad
	// cursor or status.
	FindJobs(ctx context.Context, f JobFilter) (*JobPage, error)
}

type progressKey struct{}

// NewContextWithProgress returns ctx carrying report, which long work
// (the reflector, the sleep cycle) calls as it goes with the steps done of
// the total; a job stores it, the CLI draws it.
func NewContextWithProgress(ctx context.Context, report func(done, total int)) context.Context {
	return context.WithValue(ctx, progressKey{}, report)
}

// ReportProgress passes done of total to the report in ctx, if any.
func ReportProgress(ctx context.Context, done, total int) {
	if report, ok := ctx.Value(progressKey{}).(func(done, total int)); ok && report != nil {
		report(done, total)
	}
}
