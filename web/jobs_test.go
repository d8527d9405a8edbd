package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/jobs"
	"github.com/engram-memory/engram/store/storetest"
	"github.com/engram-memory/engram/web"
)

var jobLocation = regexp.MustCompile(`^/console/jobs/(job_[A-Za-z0-9]+)\?reflection=(refl_[A-Za-z0-9]+)$`)

// jobsEnv is a console whose regenerate goes through the jobs service,
// inline up to inline live memories; the runner is left to the test.
func jobsEnv(t *testing.T, engine string, inline int64) (*env, *jobs.Service) {
	t.Helper()
	db := storetest.OpenWith(t, storetest.Options(t, engine))
	var js *jobs.Service
	e := newEnvOn(t, db, func(c *web.Config) {
		js = jobs.New(db, c.Reflections, nil, jobs.Config{InlineMaxMemories: inline, Categories: configs.Default().Memory.Categories}, nil)
		c.Jobs = js
	})
	return e, js
}

// TestRegenerateJob: on a small tenant the console's regenerate runs in
// the request, as before; on a large one it queues a reflect job and the
// browser goes to the job's page, which reloads itself while the job
// waits or runs and shows the outcome (in English and Chinese) once a
// runner did it. Another tenant's job is a 404, and a regenerate without
// the form's token queues nothing.
func TestRegenerateJob(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e, js := jobsEnv(t, engine, 5)
		small, _ := e.key(t, "acme")
		big, _ := e.key(t, "globex")
		fs := e.seed(t, "acme")
		fb := e.seed(t, "globex")
		ctx := e.ctx(t, "globex")
		for _, text := range []string{"User takes oat milk in coffee", "User drinks espresso after lunch", "User prefers coffee beans from Ethiopia"} {
			if _, err := e.db.CreateMemory(ctx, &engram.Memory{Content: text, Category: "preference"}); err != nil {
				t.Fatal(err)
			}
		}

		cs := e.client(t)
		csrf := cs.signIn(small)
		r := cs.post("/console/reflections/"+fs.Reflection.ID+"/regenerate", url.Values{"csrf": {csrf}})
		if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/console/reflections/"+fs.Reflection.ID+"?done=") {
			t.Fatalf("small tenant's regenerate: %d %s", r.Status, r.Header.Get("Location"))
		}

		cb := e.client(t)
		bcsrf := cb.signIn(big)
		if r := cb.post("/console/reflections/"+fb.Reflection.ID+"/regenerate", nil); r.Status != http.StatusForbidden {
			t.Errorf("regenerate without the CSRF token: %d", r.Status)
		}
		if page, err := js.FindJobs(ctx, engram.JobFilter{Limit: 10}); err != nil || len(page.Items) != 0 {
			t.Fatalf("jobs before the regenerate: %v %v", page, err)
		}
		r = cb.post("/console/reflections/"+fb.Reflection.ID+"/regenerate", url.Values{"csrf": {bcsrf}})
		m := jobLocation.FindStringSubmatch(r.Header.Get("Location"))
		if r.Status != http.StatusSeeOther || m == nil || m[2] != fb.Reflection.ID {
			t.Fatalf("large tenant's regenerate: %d %q", r.Status, r.Header.Get("Location"))
		}
		queued := cb.get(r.Header.Get("Location"))
		for _, want := range []string{`data-status="queued"`, `<meta http-equiv="refresh" content="2">`, `id="job-waiting"`, `href="/console/reflections/` + fb.Reflection.ID + `"`} {
			if queued.Status != http.StatusOK || !strings.Contains(queued.Body, want) {
				t.Errorf("queued job's page (%d) lacks %q", queued.Status, want)
			}
		}
		if p := cs.get("/console/jobs/" + m[1]); p.Status != http.StatusNotFound {
			t.Errorf("another tenant's job: %d", p.Status)
		}
		if p := cb.get("/console/jobs/job_nosuch"); p.Status != http.StatusNotFound {
			t.Errorf("unknown job: %d", p.Status)
		}

		if ran, err := js.RunOne(context.Background()); !ran || err != nil {
			t.Fatalf("runner: %v %v", ran, err)
		}
		done := cb.get(r.Header.Get("Location"))
		for _, want := range []string{`data-status="done"`, `id="job-progress"`, `id="job-result"`, `id="job-outcome"`, "Regenerated"} {
			if !strings.Contains(done.Body, want) {
				t.Errorf("done job's page lacks %q: %.1500s", want, done.Body)
			}
		}
		if strings.Contains(done.Body, `http-equiv="refresh"`) {
			t.Error("a finished job's page still reloads itself")
		}
		if ref, err := e.refl.FindReflectionByID(ctx, fb.Reflection.ID); err != nil || ref.Version < 2 {
			t.Errorf("the job did not write the reflection's new version: %v %v", ref, err)
		}
		cb.get("/console/lang?to=zh&next=/console/")
		if zh := cb.get(r.Header.Get("Location")); !strings.Contains(zh.Body, "已完成") || !strings.Contains(zh.Body, "已重新生成") {
			t.Errorf("the Chinese job page: %.600s", zh.Body)
		}
	})
}
