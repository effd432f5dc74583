package cntk

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestPSNRMissing(t *testing.T) {
	orig := &Image{H: 1, W: 4, C: 1, Pix: []float64{0, 0.5, 1, 0.25}}
	res := &Image{H: 1, W: 4, C: 1, Pix: []float64{9, 0.6, 1.5, 0.25}}
	observed := []bool{true, false, false, true}
	// Missing pixels 1 and 2: errors 0.1 and 0 (1.5 clipped to 1); pixel 0's
	// large error is observed and ignored.
	got := PSNRMissing(orig, res, observed)
	want := 10 * math.Log10(2/0.01)
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("PSNRMissing = %v, want %v", got, want)
	}
	if got := PSNRMissing(orig, orig, observed); got != 0 {
		t.Errorf("PSNR of an exact result = %v, want 0", got)
	}
}

func TestHeatmapMask(t *testing.T) {
	const h, w = 7, 8
	m := HeatmapMask(nil, h, w, 3, 4, 3)
	missing := 0
	for i := range h {
		for j := range w {
			inHole := i >= 2 && i <= 4 && j >= 3 && j <= 5
			if m[i*w+j] == inHole {
				t.Errorf("pixel (%d, %d): observed %v", i, j, m[i*w+j])
			}
			if !m[i*w+j] {
				missing++
			}
		}
	}
	if missing != 9 {
		t.Errorf("%d missing pixels, want 9", missing)
	}
	given := make([]bool, h*w)
	for i := range given {
		given[i] = true
	}
	m = HeatmapMask(given, h, w, 1, 2, 5)
	if m[1*w+2] || !given[1*w+2] {
		t.Error("the chosen pixel must be missing in the result and the given mask left alone")
	}
}

func TestHeatmapsShapes(t *testing.T) {
	const n = 8
	obs := HeatmapMask(nil, n, n, 3, 3, 3)
	wts, rows, err := Heatmaps(context.Background(), Arch{Filter: 3}, Prior{Kind: PriorUniform, High: 0.1}, n, n, obs, 3, 3, []int{1, 2}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(wts) != 2 || len(rows) != 2 || len(wts[0]) != n*n || len(rows[1]) != n*n {
		t.Fatalf("shapes %d, %d", len(wts), len(rows))
	}
	for p, o := range obs {
		if !o && wts[0][p] != 0 {
			t.Fatalf("missing pixel %d has weight %v", p, wts[0][p])
		}
	}
}

func TestRunReportWrite(t *testing.T) {
	m := &Image{H: 3, W: 5, C: 3}
	rep := Report{PadH: 4, PadW: 8, KernelBytes: 123}
	rep.Observed = 7
	r := NewRunReport("x.png", m, "cntk", 2, Arch{S: 2, Filter: 3, Slope: 0.1}, Prior{Kind: PriorOneHot}, rep)
	path := filepath.Join(t.TempDir(), "r.json")
	if err := r.Write(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"image": "x.png", "width": 5.0, "height": 3.0, "channels": 3.0, "padded_width": 8.0, "padded_height": 4.0,
		"kernel": "cntk", "s": 2.0, "filter": 3.0, "slope": 0.1, "prior": "onehot", "observed": 7.0, "kernel_bytes": 123.0}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if len(got) != 27 {
		t.Errorf("%d keys, want 27", len(got))
	}
}
