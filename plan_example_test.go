package rfm_test

import (
	"fmt"

	"github.com/rfmkit/rfm"
)

// Before reading or encoding anything, a caller can ask whether a fit of a
// given shape fits in a budget. Fit makes the same check itself.
func ExamplePlanFit() {
	cfg := rfm.DefaultConfig()
	shape := rfm.FitShape{N: 3, D: 100_000, Outputs: 2, Threads: 2}
	fmt.Println(rfm.PlanFit(shape, cfg).Check(1 << 30))
	cfg.Diag = true
	fmt.Println(rfm.PlanFit(shape, cfg).Check(1 << 30))
	// Output:
	// not enough memory: full M for d = 100000 (the d×d matrices) needs 6 × 74.5 GiB (447.1 GiB in all), 1.0 GiB allowed (--memory-limit); use a diagonal M (--diag, Config.Diag), whose memory grows with d, not d²
	// <nil>
}
