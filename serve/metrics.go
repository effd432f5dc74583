package serve

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/rfmkit/rfm/predictor"
)

// metrics are the server's Prometheus series (a registry per server).
type metrics struct {
	requests      *prometheus.CounterVec // handler, code
	latency       *prometheus.HistogramVec
	rows          prometheus.Counter
	inflight      prometheus.Gauge
	rejected      prometheus.Counter
	unauthorized  prometheus.Counter
	batchRows     prometheus.Histogram
	batchRequests prometheus.Histogram
	reloads       *prometheus.CounterVec // result
	reloadFailed  prometheus.Gauge
	modelInfo     *prometheus.GaugeVec // checksum, kind
	loadedAt      prometheus.Gauge
	infoLabels    []string // the labels of the model info series set last
}

func newMetrics(reg *prometheus.Registry, s *Server) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rfm_http_requests_total",
			Help: "HTTP requests answered, by handler and status code."}, []string{"handler", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rfm_http_request_duration_seconds",
			Help:    "Time from a request's arrival to its answer, by handler.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"handler"}),
		rows: prometheus.NewCounter(prometheus.CounterOpts{Name: "rfm_rows_predicted_total",
			Help: "Rows predicted."}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "rfm_predict_requests_in_flight",
			Help: "Predict requests being served."}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{Name: "rfm_predict_requests_rejected_total",
			Help: "Predict requests refused with 503 because the in-flight limit or the memory budget was reached."}),
		unauthorized: prometheus.NewCounter(prometheus.CounterOpts{Name: "rfm_requests_unauthorized_total",
			Help: "Requests refused with 401: no bearer token, or one not accepted."}),
		batchRows: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rfm_batch_rows",
			Help:    "Rows per coalesced kernel evaluation.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 8)}),
		batchRequests: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rfm_batch_requests",
			Help:    "Requests per coalesced kernel evaluation.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 9)}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rfm_model_reloads_total",
			Help: "Model reloads, by result (ok; error: the file failed; refused: its task, inputs or classes differ from the serving model's; the previous model kept serving)."}, []string{"result"}),
		reloadFailed: prometheus.NewGauge(prometheus.GaugeOpts{Name: "rfm_model_last_reload_failed",
			Help: "1 when the last reload failed and the previous model is still serving."}),
		modelInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rfm_model_info",
			Help: "The model being served (value 1), by checksum and kind."}, []string{"checksum", "kind"}),
		loadedAt: prometheus.NewGauge(prometheus.GaugeOpts{Name: "rfm_model_loaded_timestamp_seconds",
			Help: "When the model being served was loaded (Unix time)."}),
	}
	m.reloads.WithLabelValues("ok")
	m.reloads.WithLabelValues("error")
	m.reloads.WithLabelValues("refused")
	budgetUsed := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rfm_request_memory_bytes",
		Help: "Memory held by the requests being read, decoded and predicted (their charge against the budget)."},
		func() float64 { return float64(s.budget.used.Load()) })
	budgetLimit := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rfm_request_memory_budget_bytes",
		Help: "The memory budget for requests (--memory-budget)."},
		func() float64 { return float64(s.budget.limit) })
	reg.MustRegister(budgetUsed, budgetLimit)
	reg.MustRegister(m.requests, m.latency, m.rows, m.inflight, m.rejected, m.unauthorized, m.batchRows, m.batchRequests,
		m.reloads, m.reloadFailed, m.modelInfo, m.loadedAt,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// setModel points rfm_model_info at the model being served.
func (m *metrics) setModel(pm *predictor.Model) {
	kind := pm.Kind()
	// The new series first, then the old one removed: a scrape never sees
	// no model.
	m.modelInfo.WithLabelValues(pm.Checksum, kind).Set(1)
	if old := m.infoLabels; old != nil && (old[0] != pm.Checksum || old[1] != kind) {
		m.modelInfo.DeleteLabelValues(old...)
	}
	m.infoLabels = []string{pm.Checksum, kind}
	m.loadedAt.SetToCurrentTime()
}
