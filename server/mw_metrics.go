package server

import (
	"context"
	"crypto/subtle"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uptrace/bun"

	"marquee/server/jobs"
)

// metrics are the server's Prometheus metrics, in a registry of its own
// (no global registration): GET /metrics serves them.
type metrics struct {
	registry  *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	pageCache *prometheus.CounterVec
	// shared counts pages shared between instances through Redis, by what
	// happened (pagecache_shared.go).
	shared  *prometheus.CounterVec
	renders prometheus.Histogram
	// restamps counts pages renewed by rewriting their relative times
	// instead of a render (http_pagecache_restamp.go).
	restamps prometheus.Counter
	payments *prometheus.CounterVec
	// jobFailures counts failed job attempts by kind; the job queue of
	// this process adds to it (Server.JobFailures).
	jobFailures *prometheus.CounterVec
	// series holds the request counter and histogram of each label set
	// seen (requestSeries): finding them by label values hashed every
	// value on every request, a twentieth of a cached page's cost.
	series sync.Map // requestLabels -> requestSeries
	// cacheResults likewise, per page cache result.
	cacheResults sync.Map // string -> prometheus.Counter
}

type requestLabels struct {
	site, method, route string
	status              int
}

type requestSeries struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

// RenderPool is what a renderer tells of its runtimes (render.Engine).
type RenderPool interface {
	PoolStats() (inUse, size int)
}

func newMetrics(db *bun.DB, r Renderer, pc *pageCache) *metrics {
	m := &metrics{registry: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marquee_http_requests_total",
		Help: "Requests answered, by site, method, route and status (499: the client went away)."},
		[]string{"site", "method", "route", "status"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "marquee_http_request_duration_seconds",
		Help: "Time to answer a request, by site, route and status class.", Buckets: prometheus.DefBuckets},
		[]string{"site", "route", "class"})
	m.pageCache = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marquee_page_cache_requests_total",
		Help: "Cacheable page requests by result (hit, miss)."}, []string{"result"})
	m.shared = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marquee_shared_pages_total",
		Help: "Rendered pages shared between instances through Redis: shared (rendered here for all), taken (rendered by another instance), peer_rendering (a stale copy served while another instance renders)."},
		[]string{"result"})
	m.renders = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "marquee_render_duration_seconds",
		Help: "Server-side React render time.", Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}})
	m.restamps = prometheus.NewCounter(prometheus.CounterOpts{Name: "marquee_page_restamps_total",
		Help: "Cached pages renewed for the clock by rewriting their relative times (\"5m ago\") instead of a render."})
	m.payments = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marquee_payment_requests_total",
		Help: "Payment calls by route and outcome (ok, declined, refused, error)."}, []string{"route", "outcome"})
	m.jobFailures = jobs.NewFailureCounter()
	m.registry.MustRegister(m.requests, m.latency, m.pageCache, m.shared, m.renders, m.restamps, m.payments, m.jobFailures,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "marquee_page_cache_bytes",
			Help: "Bytes the page cache holds."}, func() float64 { return float64(pc.size()) }))
	if db != nil {
		m.registry.MustRegister(collectors.NewDBStatsCollector(db.DB, "marquee"), &jobCollector{db: db})
	}
	if pool, ok := r.(RenderPool); ok {
		m.registry.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "marquee_render_pool_in_use",
				Help: "Render runtimes busy."}, func() float64 { n, _ := pool.PoolStats(); return float64(n) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "marquee_render_pool_size",
				Help: "Render runtimes at most."}, func() float64 { _, n := pool.PoolStats(); return float64(n) }))
	}
	return m
}

// JobFailures is the counter of failed job attempts the job queue of this
// process adds to (jobs.Options.Failures), served at /metrics.
func (s *Server) JobFailures() *prometheus.CounterVec { return s.metrics.jobFailures }

// paymentRoutes are the calls whose answers are payment outcomes.
var paymentRoutes = map[string]bool{
	"/api/store/:storeId/musepay/process":               true,
	"/api/store/:storeId/stripe-payments/confirm":       true,
	"/api/store/:storeId/stripe-payments/create-intent": true,
	"/api/store/:storeId/stripe-payments/refund":        true,
	"/api/store/:storeId/paypal/capture-order":          true,
	"/api/subscriptions/apps/:appId/subscribe":          true,
	"/api/donations/process":                            true,
	"/api/webhooks/stripe":                              true,
	"/api/webhooks/paypal":                              true,
}

func (m *metrics) observeRequest(site, method, route string, status int, d time.Duration) {
	if m == nil {
		return
	}
	key := requestLabels{site, method, route, status}
	got, ok := m.series.Load(key)
	if !ok {
		code := strconv.Itoa(status)
		got, _ = m.series.LoadOrStore(key, requestSeries{
			count:   m.requests.WithLabelValues(site, method, route, code),
			latency: m.latency.WithLabelValues(site, route, code[:1]+"xx"),
		})
	}
	series := got.(requestSeries)
	series.count.Inc()
	series.latency.Observe(d.Seconds())
	if paymentRoutes[route] && method == http.MethodPost {
		outcome := "error"
		switch {
		case status < 300:
			outcome = "ok"
		case status == http.StatusPaymentRequired:
			outcome = "declined"
		case status < 500:
			outcome = "refused"
		}
		m.payments.WithLabelValues(route, outcome).Inc()
	}
}

func (m *metrics) pageCacheResult(result string) {
	if m == nil {
		return
	}
	c, ok := m.cacheResults.Load(result)
	if !ok {
		c, _ = m.cacheResults.LoadOrStore(result, m.pageCache.WithLabelValues(result))
	}
	c.(prometheus.Counter).Inc()
}

func (m *metrics) pageRestamped() {
	if m != nil {
		m.restamps.Inc()
	}
}

func (m *metrics) sharedPage(result string) {
	if m != nil {
		m.shared.WithLabelValues(result).Inc()
	}
}

func (m *metrics) render(d time.Duration) {
	if m != nil {
		m.renders.Observe(d.Seconds())
	}
}

// jobCollector reads river's queue at scrape time: jobs by kind and state
// (available and scheduled are the depth; retryable and discarded, the
// failures).
type jobCollector struct{ db *bun.DB }

var jobsDesc = prometheus.NewDesc("marquee_jobs", "Background jobs by kind and state (river_job).", []string{"kind", "state"}, nil)

func (j *jobCollector) Describe(ch chan<- *prometheus.Desc) { ch <- jobsDesc }

func (j *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var rows []struct {
		Kind  string `bun:"kind"`
		State string `bun:"state"`
		N     int64  `bun:"n"`
	}
	err := j.db.NewSelect().TableExpr("river_job").ColumnExpr("kind, state, count(*) AS n").
		Where("state IN ('available', 'scheduled', 'retryable', 'running', 'discarded')").
		GroupExpr("kind, state").Scan(ctx, &rows)
	if err != nil {
		return // no river tables (a test without jobs) or no database: nothing to say
	}
	for _, r := range rows {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(r.N), r.Kind, r.State)
	}
}

// GET /metrics (main site): Prometheus's text format. With METRICS_TOKEN
// set it needs "Authorization: Bearer <token>"; without, only a scraper on
// the machine itself (a loopback connection) is answered. The shipped
// nginx site does not pass it through.
func (s *Server) metricsPage(c echo.Context) error {
	req := c.Request()
	if tok := s.cfg.MetricsToken; tok != "" {
		got := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
		if subtle.ConstantTimeCompare([]byte(got), []byte(tok)) != 1 {
			return echo.NewHTTPError(http.StatusUnauthorized)
		}
	} else if host, _, err := net.SplitHostPort(req.RemoteAddr); err != nil || !isLoopback(host) || req.Header.Get("X-Forwarded-For") != "" {
		return echo.ErrNotFound
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}).ServeHTTP(c.Response(), req)
	return nil
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
