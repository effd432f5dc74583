package uci

import (
	"path/filepath"
	"testing"
)

// TestTunedCostFollowsMeasuredTime: the tuned protocol's cost estimate
// (the progress bar's ETA) is proportional to the measured time of the
// sets in results/ within a factor of 30 (25 measured), from 1 600 to 43 500 rows. It
// once counted the search on all of a split's rows (it is capped at
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
	for _, r := range rs {
		// Sets of a few hundred rows take seconds, mostly fixed costs.
		if r.Status != StatusOK || r.N < 1500 || r.Seconds <= 0 {
			continue
		}
		ratio := setCost(ProtocolTuned, &Meta{Name: r.Name, N1: r.N, D: r.D, Classes: r.Classes}) / r.Seconds
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
	if maxR > 30*minR {
		t.Errorf("the cost estimate per measured second spans %.0f× (%s %.3g, %s %.3g)", maxR/minR, lo, minR, hi, maxR)
	}
}
