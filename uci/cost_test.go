package uci

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestTunedCostFollowsMeasuredTime: the tuned protocol's cost estimate
// (the progress bar's ETA) is proportional to the measured time of the
// sets in results/ within a factor of 30 (25 measured), from 1 600 to 43 500 rows,
// and the sets under 1 500 rows, those of 1 500–10 000 and the larger
// ones each take their share of the time within a factor of 3 (2.1 on
// the files the weights were fitted to, 2.5 after Arora's 90 were timed
// again on a quieter machine; 3.6 and 4.2 with fitCost's weights, when the
// ETA after the small sets read 10 h for a run of 58 min). It once counted the search on all of a split's rows (it is capped at
// searchMaxRows) and the final fits of 10 000+ rows as exact solves (they
// are Nyström): adult's ETA after its first split read 52 hours for 35
// minutes of work; a spread of 167 across these sets.
func TestTunedCostFollowsMeasuredTime(t *testing.T) {
	var rs []Result
	for _, f := range []string{"uci-arora90/results.tsv", "uci-others23/results.tsv", "uci-large/adult.results.tsv", "uci-large/letter.results.tsv", "uci-large/chess-krvk.results.tsv", "uci-large/statlog-shuttle.results.tsv"} {
		r, err := ReadResults(filepath.Join("..", "results", f))
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r...)
	}
	lo, hi := "", ""
	minR, maxR := 0.0, 0.0
	var groupCost, groupSeconds [3]float64 // under 1 500 rows, to 10 000, above
	for _, r := range rs {
		if r.Status == StatusOK && r.Seconds > 0 {
			g := 0
			if r.N >= 10000 {
				g = 2
			} else if r.N >= 1500 {
				g = 1
			}
			groupCost[g] += setCost(ProtocolTuned, &Meta{Name: r.Name, N1: r.N, D: r.D, Classes: r.Classes}, 0)
			groupSeconds[g] += r.Seconds
		}
		// Sets of a few hundred rows take seconds, mostly fixed costs.
		if r.Status != StatusOK || r.N < 1500 || r.Seconds <= 0 {
			continue
		}
		ratio := setCost(ProtocolTuned, &Meta{Name: r.Name, N1: r.N, D: r.D, Classes: r.Classes}, 0) / r.Seconds
		if lo == "" || ratio < minR {
			lo, minR = r.Name, ratio
		}
		if hi == "" || ratio > maxR {
			hi, maxR = r.Name, ratio
		}
	}
	if lo == "" {
		t.Fatal("no measured set")
	}
	t.Logf("cost per second: %.3g (%s) to %.3g (%s)", minR, lo, maxR, hi)
	var rates []float64
	for g := range groupCost {
		rates = append(rates, groupCost[g]/groupSeconds[g])
	}
	t.Logf("cost per second by size (under 1 500 rows, to 10 000, above): %.3g", rates)
	if hi, lo := slices.Max(rates), slices.Min(rates); hi > 3*lo {
		t.Errorf("the sets of one size count %.1f× more per second than those of another: %.3g", hi/lo, rates)
	}
	if maxR > 30*minR {
		t.Errorf("the cost estimate per measured second spans %.0f× (%s %.3g, %s %.3g)", maxR/minR, lo, minR, hi, maxR)
	}
}

// TestSetCostCountsTrials: the tuned protocol's estimate follows
// --trials (it once counted 30 configurations per split whatever the run
// drew, so a run of 60 read an ETA half its length).
func TestSetCostCountsTrials(t *testing.T) {
	m := &Meta{Name: "x", N1: 2000, D: 20, Classes: 3}
	def, thirty, sixty := setCost(ProtocolTuned, m, 0), setCost(ProtocolTuned, m, 30), setCost(ProtocolTuned, m, 60)
	if def != thirty {
		t.Errorf("the default budget costs %.4g, 30 trials %.4g", def, thirty)
	}
	// The final fits do not grow with the trials: a bit under twice.
	if r := sixty / thirty; r < 1.5 || r >= 2 {
		t.Errorf("60 trials cost %.3g× 30", r)
	}
}
