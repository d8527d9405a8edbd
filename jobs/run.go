package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/engram-memory/engram"
)

// Run claims and runs jobs, one at a time, until ctx ends; then it puts
// the job it was running back in the queue, so that the next server to
// look runs it without waiting for the lease.
func (s *Service) Run(ctx context.Context) {
	defer func() {
		release, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := s.store.ReleaseJobs(release, s.cfg.Holder); err != nil {
			s.log.Warn("jobs not released; their leases run out", "err", err)
		}
	}()
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		ran, err := s.RunOne(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("job claim failed", "err", err)
		}
		if ran {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
	}
}

// RunOne claims one job and runs it to its end; false when there was none.
func (s *Service) RunOne(ctx context.Context) (bool, error) {
	j, tenant, err := s.store.ClaimJob(ctx, s.cfg.Holder, s.cfg.Lease, s.cfg.MaxAttempts)
	if err != nil || j == nil {
		return false, err
	}
	s.run(ctx, j, tenant)
	return true, nil
}

// progress is what a running job reports, read by its heartbeat.
type progress struct {
	mu sync.Mutex
	p  engram.JobProgress
}

func (p *progress) set(done, total int) {
	p.mu.Lock()
	p.p = engram.JobProgress{Done: done, Total: total}
	p.mu.Unlock()
}

func (p *progress) get() engram.JobProgress {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.p
}

// run runs one claimed job. A heartbeat writes its progress and renews
// its lease every third of the lease (at least each second); a lost lease
// cancels the work, which another server is running again.
func (s *Service) run(ctx context.Context, j *engram.Job, tenant string) {
	log := s.log.With("job", j.ID, "kind", j.Kind, "attempt", j.Attempts)
	var prog progress
	prog.set(j.Progress.Done, j.Progress.Total)
	wctx, cancel := context.WithCancel(engram.NewContextWithActor(engram.NewContextWithTenant(ctx, tenant),
		engram.Actor{KeyID: "job:" + j.ID}))
	defer cancel()
	wctx = engram.NewContextWithProgress(wctx, prog.set)

	beat := min(s.cfg.Lease/3, time.Second)
	stopped := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(beat)
		defer t.Stop()
		for {
			select {
			case <-stopped:
				return
			case <-t.C:
			}
			ok, err := s.store.RenewJob(wctx, j.ID, s.cfg.Holder, prog.get(), s.cfg.Lease)
			switch {
			case err != nil && wctx.Err() == nil:
				log.Warn("job heartbeat failed", "err", err)
			case err == nil && !ok:
				log.Warn("job lease lost; another server runs it")
				cancel()
				return
			}
		}
	}()
	log.Info("job started")
	result, err := s.work(wctx, j)
	close(stopped)
	wg.Wait()
	if wctx.Err() != nil {
		return // stopping, or the lease was lost: not this run's outcome to record
	}
	msg := ""
	if err != nil {
		msg = engram.ErrorMessage(err)
		log.Warn("job failed", "err", err)
	}
	if ok, ferr := s.store.FinishJob(ctx, j.ID, s.cfg.Holder, prog.get(), result, msg); ferr != nil || !ok {
		log.Warn("job outcome not recorded", "recorded", ok, "err", ferr)
		return
	}
	log.Info("job finished", "failed", err != nil)
}

// work runs the job's kind and returns its result as JSON.
func (s *Service) work(ctx context.Context, j *engram.Job) (json.RawMessage, error) {
	var res any
	var err error
	switch j.Kind {
	case engram.JobReflect:
		var req engram.ReflectRequest
		if err := json.Unmarshal(j.Request, &req); err != nil {
			return nil, fmt.Errorf("jobs: reflect request: %w", err)
		}
		res, err = s.reflect.Reflect(ctx, req)
	case engram.JobSleep:
		res, err = s.sleep.Sleep(ctx)
	default:
		return nil, engram.Errorf(engram.EINVALID, "unknown job kind %q", j.Kind)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}
