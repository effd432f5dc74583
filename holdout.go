package rfm

import "fmt"

// holdout returns the rows to fit on and to select the round on: valid
// when given, else a seeded (stratified) ValFraction of train. When a
// holdout was asked for but cannot be made, note says why and what was
// done instead, so that a fit never reports "no validation" silently.
func holdout(cfg Config, train, valid *Dataset) (tr, va *Dataset, note string) {
	if valid != nil || cfg.ValFraction <= 0 {
		return train, valid, ""
	}
	const instead = "no validation rows: every round was fitted on all %d rows and the last one kept"
	if train.N < 5 {
		return train, nil, fmt.Sprintf("%d training rows are too few for a %g%% holdout (5 needed); "+instead,
			train.N, 100*cfg.ValFraction, train.N)
	}
	ti, vi := Holdout(train.N, train.Labels, cfg.ValFraction, cfg.Seed)
	if len(vi) == 0 || len(ti) < 2 {
		why := fmt.Sprintf("a %g%% holdout of %d rows rounds to no rows", 100*cfg.ValFraction, train.N)
		if train.Labels != nil {
			why = fmt.Sprintf("the stratified %g%% holdout rounds to no rows: the largest class has %d rows",
				100*cfg.ValFraction, largestClass(train.Labels))
		}
		return train, nil, fmt.Sprintf("%s; "+instead, why, train.N)
	}
	return train.Subset(ti), train.Subset(vi), ""
}

// largestClass is the row count of the most frequent label.
func largestClass(labels []int) int {
	count := map[int]int{}
	most := 0
	for _, l := range labels {
		count[l]++
		most = max(most, count[l])
	}
	return most
}

// joinNotes joins non-empty notes with "; ".
func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
