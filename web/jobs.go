package web

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/engram-memory/engram"
)

// jobRefresh is how often, in seconds, a job's page reloads itself while
// the job is queued or running.
const jobRefresh = 2

type jobData struct {
	J *engram.Job
	// Reflection is the reflection whose regenerate queued the job ("" when
	// the page was opened otherwise); Outcome what the job did to its
	// group once done: "regenerated" or "unchanged".
	Reflection, Outcome string
	// Result is a done reflect job's result (nil otherwise), Sleep a done
	// sleep job's.
	Result *engram.ReflectResult
	Sleep  *engram.SleepResult
}

// handleJob shows a job of the tenant: its status and progress, reloaded
// every few seconds until it finishes, then its result or error. Another
// tenant's job is a 404.
func (c *Console) handleJob(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	if c.cfg.Jobs == nil {
		c.renderError(w, r, s, engram.Errorf(engram.ENOTFOUND, "jobs are not enabled"))
		return
	}
	j, err := c.cfg.Jobs.FindJobByID(r.Context(), r.PathValue("id"))
	if err != nil {
		c.renderError(w, r, s, err)
		return
	}
	p := c.newPage(r, s, "reflections")
	p.Title = p.T("job.title") + " " + j.ID
	d := jobData{J: j}
	if ref := r.URL.Query().Get("reflection"); plainID.MatchString(ref) {
		d.Reflection = ref
	}
	switch {
	case !j.Finished():
		p.Refresh = jobRefresh
	case j.Status == engram.JobDone && j.Kind == engram.JobReflect:
		d.Result = &engram.ReflectResult{}
		if err := json.Unmarshal(j.Result, d.Result); err != nil {
			c.renderError(w, r, s, err)
			return
		}
	case j.Status == engram.JobDone && j.Kind == engram.JobSleep:
		d.Sleep = &engram.SleepResult{}
		if err := json.Unmarshal(j.Result, d.Sleep); err != nil {
			c.renderError(w, r, s, err)
			return
		}
		d.Result = d.Sleep.Reflect
	}
	if d.Result != nil && d.Reflection != "" && c.cfg.Reflections != nil {
		if d.Outcome, err = c.outcome(r, d.Reflection, d.Result); err != nil {
			c.renderError(w, r, s, err)
			return
		}
	}
	p.Data = d
	c.render(w, http.StatusOK, "job", p)
}

// outcome is what a reflect did to reflection id's group: "regenerated"
// (a new version) or "unchanged"; a failure of its group is an error.
func (c *Console) outcome(r *http.Request, id string, res *engram.ReflectResult) (string, error) {
	ref, err := c.cfg.Reflections.FindReflectionByID(r.Context(), id)
	if err != nil {
		return "", err
	}
	for _, o := range res.Failed {
		if o.Group == ref.Group {
			return "", engram.Errorf(engram.EINTERNAL, "regenerate %s: %s", ref.ID, o.Reason)
		}
	}
	for _, o := range res.Written {
		if o.Group == ref.Group {
			return "regenerated", nil
		}
	}
	return "unchanged", nil
}

// jobURL is the console page of job j, naming the reflection it
// regenerates.
func jobURL(j *engram.Job, reflectionID string) string {
	return "/console/jobs/" + url.PathEscape(j.ID) + "?reflection=" + url.QueryEscape(reflectionID)
}
