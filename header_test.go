package rfm

import (
	"strings"
	"testing"

	"github.com/rfmkit/rfm/kernel"
)

// The Header embedded in Model keeps the JSON a file holds where it has
// always been: config, task, outputs and d first, the calibration after the
// note and before the history, so that old files and new ones of the same
// fit are the same bytes.
func TestHeaderKeepsTheFileLayout(t *testing.T) {
	m := &Model{Header: Header{Config: DefaultConfig(), Task: Classification, Outputs: 2, D: 1,
		Calibration: &Calibration{Method: CalibrateTemperature, Temperature: 2}},
		KernelUsed: DefaultConfig().Kernel, M: kernel.IdentityMatrix(1), N: 1, Centers: []float64{0}, Alpha: []float64{1, 0}, Note: "n",
		History: []Round{{Round: 0}}}
	f, err := m.ToFile(nil)
	if err != nil {
		t.Fatal(err)
	}
	meta := string(f.Meta)
	order := []string{`{"model":{"config":`, `"task":`, `"outputs":`, `"d":`, `"selected"`, `"kernel_used":`, `"note":"n"`, `"calibration":`, `"history":`}
	last := -1
	for _, key := range order {
		i := strings.Index(meta, key)
		if key == `"selected"` {
			if i >= 0 {
				t.Errorf("an unset selection is written: %s", meta)
			}
			continue
		}
		if i <= last {
			t.Fatalf("%s is out of place in %s", key, meta)
		}
		last = i
	}
	if strings.Count(meta, `"calibration"`) != 1 {
		t.Errorf("the calibration is written %d times", strings.Count(meta, `"calibration"`))
	}
	back, _, err := FromFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if back.Calibration == nil || back.Calibration.Temperature != 2 || back.ModelHeader().D != 1 || back.Kind() != "rfm" {
		t.Errorf("read back %+v", back.Header)
	}
}
