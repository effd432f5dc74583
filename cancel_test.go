package rfm

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rfmkit/rfm/synth"
)

// cancelAt fits ds and cancels the context from the progress callback the
// first time at(p) holds. It returns Fit's error, whether that point was
// reached, and how many progress reports came after the cancellation.
func cancelAt(t testing.TB, ds *Dataset, cfg Config, at func(Progress) bool) (err error, reached bool, after int, latency time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var start time.Time
	_, err = Fit(ctx, cfg, ds, nil, func(p Progress) {
		if reached {
			after++
			return
		}
		if at(p) {
			reached = true
			start = time.Now()
			cancel()
		}
	})
	if reached {
		latency = time.Since(start)
	}
	return err, reached, after, latency
}

// inFactorization matches the solver's progress reports from inside the
// Cholesky factorization of round 0 (the first fit report has Fraction 0).
func inFactorization(p Progress) bool {
	return p.Stage == "fit" && p.Round == 0 && p.Fraction > 0 && p.Last == nil
}

// Cancellation is observed at the next check point, whatever the stage:
// once the context is cancelled (here from the progress callback, so the
// moment is known exactly), Fit returns context.Canceled without reporting
// any further progress, i.e. without finishing the panel, block or stage it
// was in. This counts work instead of timing it, so a loaded machine cannot
// make it fail; BenchmarkCancellationLatency measures the latency.
func TestCancellationIsObservedAtTheNextCheckpoint(t *testing.T) {
	ds := regression(t, synth.Product, 1500, 10, 1)
	cfg := DefaultConfig()
	cfg.Iters = 2
	points := []struct {
		name string
		at   func(Progress) bool
	}{
		{"inside the first factorization", inFactorization},
		{"at the first AGOP", func(p Progress) bool { return p.Stage == "agop" }},
		{"at the second round's fit", func(p Progress) bool { return p.Stage == "fit" && p.Round == 1 }},
		{"at the refit", func(p Progress) bool { return p.Stage == "refit" }},
	}
	for _, pt := range points {
		err, reached, after, _ := cancelAt(t, ds, cfg, pt.at)
		if !reached {
			t.Errorf("%s: the fit never got there (error %v)", pt.name, err)
			continue
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: error %v, want context.Canceled", pt.name, err)
		}
		if after != 0 {
			t.Errorf("%s: %d progress reports after the cancellation; want none (the next check point should stop the fit)", pt.name, after)
		}
	}
}

// BenchmarkCancellationLatency measures the time from a cancellation inside
// the first factorization (n = 6000) to Fit's return, as ms/cancel. The
// README's "within a fraction of a second" is this figure on an idle machine.
func BenchmarkCancellationLatency(b *testing.B) {
	ds := regression(b, synth.Product, 6000, 20, 1)
	cfg := DefaultConfig()
	cfg.ValFraction = 0
	var total time.Duration
	for range b.N {
		err, reached, _, lat := cancelAt(b, ds, cfg, inFactorization)
		if !reached || !errors.Is(err, context.Canceled) {
			b.Fatalf("cancellation not reached or not reported: %v", err)
		}
		total += lat
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/cancel")
}
