package phenomena

import (
	"strings"
	"testing"
)

// The text report has a control accuracy only for the halves experiment.
func TestWriteText(t *testing.T) {
	res := &Result{Kind: "halves", Train: 10, Test: 5, Inputs: 784, Focus: "top half",
		Points: []Point{{Model: "rfm", Time: 1, TrainAcc: 90, TestAcc: 80, TestAcc2: 55.5, FocusMass: 0.75}}}
	var b strings.Builder
	res.WriteText(&b)
	if got := b.String(); !strings.HasPrefix(got, "halves: 10 training, 5 test images of 784 pixels; focus: top half\n") || !strings.Contains(got, "55.5") || !strings.Contains(got, "0.750") {
		t.Errorf("halves:\n%s", got)
	}
	res.Kind = "marker"
	b.Reset()
	res.WriteText(&b)
	if strings.Contains(b.String(), "55.5") {
		t.Errorf("marker shows a control accuracy:\n%s", b.String())
	}
}
