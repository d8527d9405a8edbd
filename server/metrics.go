package server

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/engram-memory/engram"
)

type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// newMetrics registers request counts and latencies by route, memory
// counts by state (read from the store at scrape time, across tenants,
// with no tenant label so /metrics reveals no tenant), and the Go runtime.
func newMetrics(reg *prometheus.Registry, memories engram.MemoryService, quotas QuotaRefusals) (*metrics, error) {
	m := &metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "engram_http_requests_total", Help: "HTTP requests by method, route pattern and status code.",
		}, []string{"method", "route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "engram_http_request_duration_seconds", Help: "HTTP request latency by method and route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"method", "route"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency, &memoryCollector{svc: memories}, quotaCollector{quotas},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) middleware(c *gin.Context) {
	start := time.Now()
	c.Next()
	route, method := routeOf(c), methodLabel(c.Request.Method)
	m.requests.WithLabelValues(method, route, strconv.Itoa(c.Writer.Status())).Inc()
	m.latency.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
}

// methodLabel bounds the method label: a client can send any method
// name, and each would otherwise become a new series.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "OTHER"
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

var memoriesDesc = prometheus.NewDesc("engram_memories", "L2 memories by state (active, archived, tombstoned).", []string{"state"}, nil)

// memoryCollector counts memories at most every memoryCountTTL: /metrics
// needs no key, and each count scans the table, so scrapes must not be a
// way to keep the database busy.
type memoryCollector struct {
	svc    engram.MemoryService
	mu     sync.Mutex
	at     time.Time
	counts map[string]int64
}

const memoryCountTTL = 15 * time.Second

func (c *memoryCollector) Describe(ch chan<- *prometheus.Desc) { ch <- memoriesDesc }

func (c *memoryCollector) Collect(ch chan<- prometheus.Metric) {
	if c.svc == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil || time.Since(c.at) > memoryCountTTL {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		counts, err := c.svc.CountMemories(ctx)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(memoriesDesc, err)
			return
		}
		c.counts, c.at = counts, time.Now()
	}
	counts := c.counts
	for state, n := range counts {
		ch <- prometheus.MustNewConstMetric(memoriesDesc, prometheus.GaugeValue, float64(n), state)
	}
}

// QuotaRefusals counts, by quota name, the writes a per-tenant quota
// refused in this process, whatever door they came through (the store).
type QuotaRefusals interface {
	QuotaRefusals() map[string]int64
}

var quotaRefusalsDesc = prometheus.NewDesc("engram_quota_refusals_total",
	"Writes refused because a tenant's quota (memories, bytes, sessions) was used up.", []string{"quota"}, nil)

// quotaCollector reports QuotaRefusals; no tenant label, as for memories.
type quotaCollector struct{ src QuotaRefusals }

func (c quotaCollector) Describe(ch chan<- *prometheus.Desc) { ch <- quotaRefusalsDesc }

func (c quotaCollector) Collect(ch chan<- prometheus.Metric) {
	if c.src == nil {
		return
	}
	for quota, n := range c.src.QuotaRefusals() {
		ch <- prometheus.MustNewConstMetric(quotaRefusalsDesc, prometheus.CounterValue, float64(n), quota)
	}
}
