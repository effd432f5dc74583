package serveload

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// Run fits a small synthetic model, serves it and loads it with two
// request sizes: every request is answered without an error status, the
// percentiles are ordered, the batches hold at least one request's rows,
// and a CPU profile of the phases is written.
func TestRunSynthetic(t *testing.T) {
	var events []Event
	var prof bytes.Buffer
	res, err := Run(context.Background(), Options{ModelSource: ModelSource{Centers: 300, Inputs: 6, Version: "test"}, Clients: 4, Duration: 300 * time.Millisecond,
		Sizes: []int{1, 7}, BatchWait: -1, BatchRows: 4096, CPUProfile: &prof, Progress: func(e Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Centers != 300 || res.Inputs != 6 || res.OfflineRowsSec <= 0 || res.OfflineRows != 20480 || len(res.Runs) != 2 {
		t.Fatalf("%+v", res)
	}
	for _, run := range res.Runs {
		if run.Requests == 0 || run.Status5xx+run.Status4xx+run.Errors != 0 || run.P50ms <= 0 || run.P99ms < run.P50ms || run.MaxMs < run.P99ms ||
			run.MeanBatchRows < float64(run.RowsPerRequest) || run.Clients != 4 || !(run.OfflineRatio > 0) {
			t.Errorf("%+v", run)
		}
	}
	if len(events) != 4 || !events[0].Fitting || events[1].Fitted <= 0 || events[2].Phase != 1 || events[3].Phase != 7 {
		t.Errorf("events %+v", events)
	}
	if prof.Len() == 0 {
		t.Error("no CPU profile written")
	}
	if res.Options["batch_wait"] != "-1ns" || res.Options["duration"] != "300ms" {
		t.Errorf("options %v", res.Options)
	}
}

// Bad options are errors before anything runs; a missing model file is
// an error naming it.
func TestRunErrors(t *testing.T) {
	good := Options{ModelSource: ModelSource{Centers: 300, Inputs: 6}, Clients: 1, Duration: time.Second, Sizes: []int{1}}
	for _, o := range []Options{
		{ModelSource: ModelSource{Centers: 300, Inputs: 6}, Clients: 0, Duration: time.Second, Sizes: []int{1}},
		{ModelSource: ModelSource{Centers: 5, Inputs: 6}, Clients: 1, Duration: time.Second, Sizes: []int{1}},
		{ModelSource: ModelSource{Centers: 300, Inputs: 6}, Clients: 1, Sizes: []int{1}},
		{ModelSource: ModelSource{Centers: 300, Inputs: 6}, Clients: 1, Duration: time.Second, Sizes: []int{0}},
	} {
		if err := o.Check(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if err := good.Check(); err != nil {
		t.Error(err)
	}
	good.Model = "no-such.rfm"
	if _, err := Run(context.Background(), good); err == nil || !strings.Contains(err.Error(), "no-such.rfm") {
		t.Errorf("missing model: %v", err)
	}
}
