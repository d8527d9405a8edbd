package mcp

import (
	"context"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
)

// defaultReflections and maxReflections bound the write-ups reflect
// returns: each is a page of Markdown.
const (
	defaultReflections = 5
	maxReflections     = 20
)

type reflectArgs struct {
	Category string `json:"category,omitempty" jsonschema:"reflect on this category only; omit for all"`
	Limit    *int   `json:"limit,omitempty" jsonschema:"most reflections to return, most recently written first"`
	UserID   string `json:"user_id,omitempty" jsonschema:"the end user this call is for: their reflections and the shared ones; omit for shared only"`
}

type reflection struct {
	ID       string `json:"id"`
	Group    string `json:"group" jsonschema:"the topic: a category, category/subcategory or category#tag"`
	Category string `json:"category"`
	Title    string `json:"title"`
	Version  int64  `json:"version"`
	Markdown string `json:"markdown" jsonschema:"what is known, what worked, what failed, open questions; claims cite memory ids"`
	Cited    int    `json:"cited" jsonschema:"memories its claims cite"`
}

type reflectResult struct {
	Groups  int                     `json:"groups" jsonschema:"topics with enough memories to reflect on"`
	Written []engram.ReflectOutcome `json:"written" jsonschema:"reflections written or rewritten now"`
	Skipped []engram.ReflectOutcome `json:"skipped" jsonschema:"unchanged since their last reflection"`
	Failed  []engram.ReflectOutcome `json:"failed"`
	// Job is set when the tenant is large: the reflect runs as a job and
	// the lists above are empty until it is done.
	Job         *reflectJob  `json:"job,omitempty" jsonschema:"set when the reflect runs as a job (a large tenant): written, skipped and failed are empty and reflections are those written so far"`
	Reflections []reflection `json:"reflections"`
}

type reflectJob struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	StatusURL string `json:"status_url" jsonschema:"GET it over HTTP for progress and outcome"`
}

func (b *toolbox) addReflect() {
	addTool(b, &sdk.Tool{
		Name: "reflect",
		Description: "Write up what the memories say, topic by topic (what is known, what worked, what failed or misled, " +
			"open questions, each claim citing its memories), and return the write-ups. Use it when the user asks what " +
			"has been learned or for a review of past work, or after many new memories. Unchanged topics are not rewritten.",
		Annotations: &sdk.ToolAnnotations{Title: "Reflect", DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, func(s *jsonschema.Schema) {
		enum(s, "category", b.s.cfg.Categories...)
		between(s, "limit", 1, maxReflections)
		defaultValue(s, "limit", defaultReflections)
	}, b.s.reflect)
}

func (s *Server) reflect(ctx context.Context, a *reflectArgs) (*reflectResult, error) {
	limit := defaultReflections
	if a.Limit != nil {
		if *a.Limit < 1 || *a.Limit > maxReflections {
			return nil, engram.Errorf(engram.EINVALID, "limit must be between 1 and %d", maxReflections)
		}
		limit = *a.Limit
	}
	var res *engram.ReflectResult
	var job *engram.Job
	var err error
	if s.cfg.Jobs != nil {
		res, job, err = s.cfg.Jobs.Reflect(ctx, engram.ReflectRequest{Category: a.Category})
	} else {
		res, err = s.cfg.Reflections.Reflect(ctx, engram.ReflectRequest{Category: a.Category})
	}
	if err != nil {
		return nil, err
	}
	if job != nil {
		res = &engram.ReflectResult{}
	}
	f := engram.ReflectionFilter{Limit: limit, Visible: true} // a model reads: the shared and the call's user's
	if a.Category != "" {
		f.Category = &a.Category
	}
	page, err := s.cfg.Reflections.FindReflections(ctx, f)
	if err != nil {
		return nil, err
	}
	user := engram.UserFromContext(ctx)
	out := &reflectResult{Groups: res.Groups, Written: visibleOutcomes(res.Written, user), Skipped: visibleOutcomes(res.Skipped, user),
		Failed: visibleOutcomes(res.Failed, user), Reflections: make([]reflection, len(page.Items))}
	if job != nil {
		out.Job = &reflectJob{ID: job.ID, Status: job.Status, StatusURL: "/v1/jobs/" + job.ID}
	}
	for i, r := range page.Items {
		out.Reflections[i] = reflection{ID: r.ID, Group: r.Group, Category: r.Category, Title: r.Title, Version: r.Version,
			Markdown: r.Markdown, Cited: len(r.Cited)}
	}
	return out, nil
}

// visibleOutcomes keeps the outcomes of the shared groups and of the
// call's user's ("@<user>/…"), as the reflections it lists: a model reads
// no other user's group names, which hold their tags.
func visibleOutcomes(os []engram.ReflectOutcome, user string) []engram.ReflectOutcome {
	out := []engram.ReflectOutcome{}
	for _, o := range os {
		if !strings.HasPrefix(o.Group, "@") || user != "" && strings.HasPrefix(o.Group, "@"+user+"/") {
			out = append(out, o)
		}
	}
	return out
}
