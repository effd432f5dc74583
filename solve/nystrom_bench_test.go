package solve

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rfmkit/rfm/internal/sysmem"
	"github.com/rfmkit/rfm/kernel"
)

// BenchmarkNystrom fits n = 100 000 rows, d = 20, m = 2 000 uniform
// centres, one output, for a fixed 10 CG iterations (Tol unreachable), and
// reports seconds per CG iteration, seconds of setup (centres, K_mm and
// the two factorizations, K_nmᵀy) and the peak RSS. Run it alone:
//
//	go test -bench Nystrom -run '^$' -benchtime 1x ./solve
//
// NYSTROM_N and NYSTROM_M override n and m; NYSTROM_NOCACHE=1 recomputes
// K_nm at every iteration (by default it is kept when it fits);
// NYSTROM_F32=1 factors the preconditioner in float32 (the operator then
// applies K_mm itself: from the stored block's rows, or from the kernel).
func BenchmarkNystrom(b *testing.B) {
	n, d, m, iters := 100_000, 20, 2_000, 10
	if v, err := strconv.Atoi(os.Getenv("NYSTROM_N")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.Atoi(os.Getenv("NYSTROM_M")); err == nil && v > 0 {
		m = v
	}
	z, y := smooth(n, d, 0.1, 1)
	x := kernel.NewPoints(z, n, d)
	s := kernel.DefaultSpec()
	b.ResetTimer()
	var iterTime, setup time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var first, last time.Time
		opt := NystromOptions{M: m, Ridge: 1e-3 / float64(n), Tol: 1e-300, MaxIter: iters, Seed: uint64(i),
			NoCache: os.Getenv("NYSTROM_NOCACHE") == "1", Float32: os.Getenv("NYSTROM_F32") == "1",
			Progress: func(p NystromProgress) {
				if p.Iter == 1 {
					first = time.Now()
				}
				last = time.Now()
			}}
		res, err := Nystrom(context.Background(), s, x, y, 1, opt)
		if err != nil {
			b.Fatal(err)
		}
		if res.Iterations != iters {
			b.Fatalf("%d iterations, want %d", res.Iterations, iters)
		}
		// The first iteration's end minus one iteration's share is when
		// CG started: setup is what came before.
		per := last.Sub(first) / time.Duration(iters-1)
		iterTime += per
		setup += first.Sub(start) - per
	}
	b.ReportMetric(iterTime.Seconds()/float64(b.N), "s/iter")
	b.ReportMetric(setup.Seconds()/float64(b.N), "s-setup/op")
	b.ReportMetric(float64(sysmem.PeakRSS())/(1<<20), "peak-MiB")
}
