package tune

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// A choice made with the defaults cut before the top rung has no default
// loss or margin; its JSON must say null, not fail (rfm tune --json did).
func TestChoiceJSONWithoutDefaults(t *testing.T) {
	c := Choice{Kept: "lowest loss", Lowest: 3, LowestLoss: 0.25, ChosenLoss: 0.25,
		DefaultLoss: math.NaN(), Margin: math.NaN(), SE: math.NaN(), Z: 1.5, Splits: 1, Folds: 1, Candidates: 4}
	b, err := json.Marshal(&Result{Choice: &c})
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	raw := string(b)
	for _, want := range []string{`"default_loss":null`, `"margin_over_defaults":null`, `"margin_se":null`, `"lowest_loss":0.25`, `"kept":"lowest loss"`, `"margin_z":1.5`} {
		if !strings.Contains(raw, want) {
			t.Errorf("JSON %s lacks %s", raw, want)
		}
	}
	if strings.Count(raw, `"lowest_loss"`) != 1 {
		t.Errorf("lowest_loss written twice: %s", raw)
	}
}
