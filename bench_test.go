package rfm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rfmkit/rfm/internal/sysmem"
	"github.com/rfmkit/rfm/synth"
)

// benchRound times one RFM round (kernel + solve + AGOP on all points) at
// n = 20 000, d = 100, one output, and reports the peak RSS over the bytes
// of one n×n matrix. Run each precision in its own process
// (-bench 'Round20000F64$' and -bench 'Round20000F32$'): VmHWM is a
// process-wide high-water mark.
func benchRound(b *testing.B, n int, f32 bool) {
	d := 100
	s, err := synth.Generate(synth.LowRank, n, d, 1)
	if err != nil {
		b.Fatal(err)
	}
	ds := &Dataset{X: s.X, N: n, D: d, Y: s.Y}
	cfg := DefaultConfig()
	cfg.Iters = 1 // one fit + one AGOP; the second fit is cut by early stop below
	cfg.ValFraction = 0
	cfg.Refit = false
	cfg.Float32 = f32
	matrix := float64(n) * float64(n) * 8
	if f32 {
		matrix /= 2
	}
	var fitSec, agopSec float64
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		var agopStart time.Time
		_, err := Fit(ctx, cfg, ds, nil, func(p Progress) {
			if p.Stage == "agop" && p.Last != nil {
				fitSec, agopStart = p.Last.FitSeconds, time.Now()
			}
			if p.Round == 1 && p.Stage == "fit" {
				agopSec = time.Since(agopStart).Seconds()
				cancel() // stop at the start of round 1: round 0's fit + AGOP timed
			}
		})
		cancel()
		if err != nil && err != context.Canceled && !strings.Contains(err.Error(), "canceled") {
			b.Fatal(err)
		}
	}
	b.ReportMetric(fitSec, "fit-s")
	b.ReportMetric(agopSec, "agop-s")
	b.ReportMetric(float64(sysmem.PeakRSS())/1e6, "peakRSS-MB")
	b.ReportMetric((float64(sysmem.PeakRSS())-matrix)/1e6, "RSS-over-matrix-MB")
}

func BenchmarkRound20000F64(b *testing.B) { benchRound(b, 20000, false) }
func BenchmarkRound20000F32(b *testing.B) { benchRound(b, 20000, true) }

// BenchmarkRound5000F64 compares the backends at a size the pure-Go build
// finishes quickly.
func BenchmarkRound5000F64(b *testing.B) { benchRound(b, 5000, false) }
