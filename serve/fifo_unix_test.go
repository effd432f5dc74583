//go:build unix

package serve

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rfmkit/rfm/internal/testutil"
)

// A named pipe swapped in at the model path never blocks the reloader:
// the reload fails at once, logged and counted, the old model serves, and
// the next valid file (seen by the watcher, or on SIGHUP) is loaded.
func TestWatchSurvivesFIFO(t *testing.T) {
	ts, dir, path, next, first := watchedServer(t)
	fifo := testutil.FIFO(t, dir, "fifo")
	if err := os.Rename(fifo, path); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the failed reload to be counted", func() bool {
		return metricValue(t, ts.url, "rfm_model_last_reload_failed") == 1
	})
	if !strings.Contains(ts.logs.String(), "is a named pipe (FIFO)") {
		t.Errorf("the failed reload is not logged:\n%s", ts.logs.String())
	}
	if ts.Model().Checksum != first {
		t.Error("the model changed")
	}
	// SIGHUP while the FIFO is there: fails again, at once.
	select {
	case ts.reload <- struct{}{}:
	case <-time.After(5 * time.Second):
		t.Fatal("the reloader does not take SIGHUP")
	}
	b, err := os.ReadFile(next)
	if err != nil {
		t.Fatal(err)
	}
	writeAtomic(t, path, b)
	waitFor(t, "the valid file to be loaded", func() bool { return ts.Model().Checksum != first })
	if v := metricValue(t, ts.url, "rfm_model_last_reload_failed"); v != 0 {
		t.Errorf("rfm_model_last_reload_failed = %v after a good reload", v)
	}
	if a := post(t, ts.url+"/v1/predict", "application/json", `[{"x1": 0.5, "x2": 1, "color": "red"}]`); a.status != 200 {
		t.Errorf("after the reloads: %d %s", a.status, a.body)
	}
}
