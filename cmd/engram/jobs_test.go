package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/server"
	"github.com/engram-memory/engram/server/openapitest"
	"github.com/engram-memory/engram/store/storetest"
)

// jobClient talks to one engram over HTTP with one key.
type jobClient struct {
	t      *testing.T
	url    string
	key    string
	client *http.Client
}

// do sends body (JSON, none when empty) and returns the status, headers
// and body.
func (c jobClient) do(method, path, body string) (int, http.Header, []byte) {
	c.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, c.url+path, r)
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// ingestGroups stores groups × 3 memories, three of each subcategory
// g<first+i>, so the reflector finds one group per subcategory.
func (c jobClient) ingestGroups(first, groups int) {
	c.t.Helper()
	var batch []string
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if status, _, b := c.do("POST", "/v1/memories/batch", `{"memories":[`+strings.Join(batch, ",")+`]}`); status != http.StatusOK {
			c.t.Fatalf("batch: %d %s", status, b)
		}
		batch = batch[:0]
	}
	for g := first; g < first+groups; g++ {
		for i := range 3 {
			batch = append(batch, fmt.Sprintf(`{"content":"Project g%d step %d: the team chose option %c for milestone %d",`+
				`"category":"work","subcategory":"g%d","source":"test"}`, g, i, 'A'+rune(i), g*7+i, g))
			if len(batch) == 100 {
				flush()
			}
		}
	}
	flush()
}

// job reads one job.
func (c jobClient) job(id string) engram.Job {
	c.t.Helper()
	status, _, b := c.do("GET", "/v1/jobs/"+id, "")
	if status != http.StatusOK {
		c.t.Fatalf("GET job: %d %s", status, b)
	}
	var j engram.Job
	if err := json.Unmarshal(b, &j); err != nil {
		c.t.Fatal(err)
	}
	return j
}

// reflectJob posts a reflect that must become a job and returns its id.
func (c jobClient) reflectJob() string {
	c.t.Helper()
	status, h, b := c.do("POST", "/v1/reflect", "")
	var out struct {
		JobID     string `json:"job_id"`
		StatusURL string `json:"status_url"`
	}
	_ = json.Unmarshal(b, &out)
	if status != http.StatusAccepted || out.JobID == "" || h.Get("Location") != out.StatusURL || out.StatusURL != "/v1/jobs/"+out.JobID {
		c.t.Fatalf("reflect on a large tenant: %d %v %s", status, h, b)
	}
	return out.JobID
}

// waitJob polls a job until it finished.
func (c jobClient) waitJob(id string) engram.Job {
	c.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if j := c.job(id); j.Finished() {
			return j
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("job %s did not finish in 30 s: %+v", id, c.job(id))
		}
	}
}

// TestReflectJob: on a tenant of at most jobs.inline_max_memories
// memories POST /v1/reflect answers its result (200) as it always did; on
// a larger one it answers 202 with the job's id and Location at once,
// and GET /v1/jobs/{id} reports the job until it is done, with the result
// the inline answer would have carried; POST /v1/sleep likewise. Every
// answer matches the OpenAPI document. A bad category is refused before
// any job is queued.
func TestReflectJob(t *testing.T) {
	doc, err := openapitest.Parse(server.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		environ := []string{"ENGRAM_STORE_DRIVER=" + engine, "ENGRAM_JOBS_INLINE_MAX_MEMORIES=5", "ENGRAM_JOBS_POLL=50ms"}
		if engine == "postgres" {
			environ = append(environ, "ENGRAM_STORE_DSN="+storetest.Options(t, engine).DSN)
		}
		m := boot(t, t.TempDir(), environ)
		key, err := os.ReadFile(m.KeyFile)
		if err != nil {
			t.Fatal(err)
		}
		c := jobClient{t: t, url: m.URL(), key: strings.TrimSpace(string(key)), client: &http.Client{Transport: &openapitest.Transport{Doc: doc}}}

		c.ingestGroups(0, 1)
		if status, _, b := c.do("POST", "/v1/reflect", ""); status != http.StatusOK || !strings.Contains(string(b), `"groups":1`) {
			t.Fatalf("reflect on a small tenant: %d %s", status, b)
		}
		c.ingestGroups(1, 3)
		if status, _, b := c.do("POST", "/v1/reflect", `{"category":"nope"}`); status != http.StatusBadRequest {
			t.Fatalf("unknown category: %d %s", status, b)
		}
		id := c.reflectJob()
		j := c.waitJob(id)
		var res engram.ReflectResult
		if err := json.Unmarshal(j.Result, &res); err != nil || j.Status != engram.JobDone || j.Kind != engram.JobReflect ||
			res.Groups != 4 || len(res.Written) != 3 || len(res.Skipped) != 1 || j.Progress != (engram.JobProgress{Done: 4, Total: 4}) ||
			j.StartedAt == nil || j.FinishedAt == nil || j.Attempts != 1 {
			t.Fatalf("job: %+v result %+v (%v)", j, res, err)
		}
		// A sleep of the large tenant is a job too; the reflect it ends
		// with finds every group unchanged.
		status, h, b := c.do("POST", "/v1/sleep", "")
		var acc struct {
			JobID string `json:"job_id"`
		}
		if err := json.Unmarshal(b, &acc); status != http.StatusAccepted || err != nil || h.Get("Location") != "/v1/jobs/"+acc.JobID {
			t.Fatalf("sleep on a large tenant: %d %s", status, b)
		}
		slept := c.waitJob(acc.JobID)
		var sres engram.SleepResult
		if err := json.Unmarshal(slept.Result, &sres); err != nil || slept.Status != engram.JobDone || slept.Kind != engram.JobSleep ||
			sres.Reflect == nil || sres.Reflect.Groups != 4 || len(sres.Reflect.Written) != 0 {
			t.Fatalf("sleep job: %+v result %+v (%v)", slept, sres, err)
		}
		if status, _, b := c.do("POST", "/v1/sleep", `{"now":true}`); status != http.StatusBadRequest {
			t.Fatalf("sleep with a body: %d %s", status, b)
		}
		status, _, b = c.do("GET", "/v1/jobs?status=done", "")
		var page struct{ Items []engram.Job }
		if err := json.Unmarshal(b, &page); status != http.StatusOK || err != nil || len(page.Items) != 2 || page.Items[1].ID != id {
			t.Fatalf("list: %d %s", status, b)
		}
		if status, _, b := c.do("GET", "/v1/jobs?status=lost", ""); status != http.StatusBadRequest {
			t.Fatalf("unknown status: %d %s", status, b)
		}
		if status, _, b := c.do("GET", "/v1/jobs/job_none", ""); status != http.StatusNotFound {
			t.Fatalf("unknown job: %d %s", status, b)
		}
		if engine != "sqlite" {
			return
		}
		// engram jobs reads them from the store.
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), []string{"jobs", "--data", m.Config.DataDir, id}, nil, &out, &errOut); code != 0 ||
			!strings.Contains(out.String(), `"status": "done"`) {
			t.Fatalf("engram jobs ID: %d %s %s", code, out.String(), errOut.String())
		}
		out.Reset()
		if code := Run(context.Background(), []string{"jobs", "--data", m.Config.DataDir, "--status", "failed"}, nil, &out, &errOut); code != 0 ||
			strings.TrimSpace(out.String()) != "[]" {
			t.Fatalf("engram jobs --status failed: %d %s %s", code, out.String(), errOut.String())
		}
		if code := Run(context.Background(), []string{"jobs", "--data", m.Config.DataDir, "job_none"}, nil, &out, &errOut); code != 1 {
			t.Fatalf("engram jobs of an unknown job: exit %d", code)
		}
	})
}

// TestProgressBar: on a terminal the bar is redrawn in place; elsewhere
// one plain line per tenth, and none for a report that knows no total.
func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	p := &progressBar{w: &b, label: "reflect", tenth: -1}
	p.report(0, 0)
	for i := 0; i <= 250; i++ {
		p.report(i, 250)
	}
	p.finish()
	if lines := strings.Split(strings.TrimSpace(b.String()), "\n"); len(lines) != 11 || lines[0] != "reflect: 0/250" ||
		lines[10] != "reflect: 250/250" || strings.Contains(b.String(), "\r") {
		t.Fatalf("plain lines:\n%s", b.String())
	}
	b.Reset()
	p = &progressBar{w: &b, tty: true, label: "reflect", tenth: -1}
	p.report(5, 10)
	p.finish()
	if got := b.String(); got != "\rreflect [###############...............] 5/10\n" {
		t.Fatalf("bar: %q", got)
	}
}

// reflections returns every current reflection's version by group, and
// how many reflection files the tenant has.
func (c jobClient) reflections(dir string) (map[string]int64, int) {
	c.t.Helper()
	out := map[string]int64{}
	for cursor := ""; ; {
		status, _, b := c.do("GET", "/v1/reflections?limit=500&cursor="+cursor, "")
		var page struct {
			Items      []engram.Reflection `json:"items"`
			NextCursor string              `json:"next_cursor"`
		}
		if err := json.Unmarshal(b, &page); status != http.StatusOK || err != nil {
			c.t.Fatalf("reflections: %d %s", status, b)
		}
		for _, r := range page.Items {
			if _, dup := out[r.Group]; dup {
				c.t.Fatalf("group %s has two reflections", r.Group)
			}
			out[r.Group] = r.Version
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "work", "*.md"))
	return out, len(files)
}
