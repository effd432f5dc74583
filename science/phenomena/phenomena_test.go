package phenomena

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/mnist"
)

// digits is a tiny stand-in for MNIST: 8×8 images, each class a fixed
// random stroke pattern (rows 2 on, so the marker's row stays blank) with
// a quarter of its strokes dropped at random in each image.
func digits(n int, seed uint64) *mnist.Set {
	const h, w = 8, 8
	r := rand.New(rand.NewPCG(seed, 7))
	pr := rand.New(rand.NewPCG(99, 7))
	var patterns [10][]bool
	for c := range patterns {
		patterns[c] = make([]bool, h*w)
		for p := 2 * w; p < h*w; p++ {
			patterns[c][p] = pr.Float64() < 0.35
		}
	}
	s := &mnist.Set{N: n, D: h * w, H: h, W: w, X: make([]float64, n*h*w), Y: make([]int, n)}
	for i := 0; i < n; i++ {
		c := i % 10
		s.Y[i] = c
		for p, on := range patterns[c] {
			if on && r.Float64() > 0.25 {
				s.X[i*h*w+p] = 1
			}
		}
	}
	return s
}

// On the marker task the plain kernel (round 0) misses the faint marker
// and one AGOP round finds it: the test accuracy jumps and diag(M) moves
// onto the marker's two pixels.
func TestMarker(t *testing.T) {
	var points int
	res, err := Run(context.Background(), digits(500, 1), digits(500, 2), Options{Kind: Marker, N: 400, Epochs: 3, Rounds: 1, LR: 0.05,
		WeightDecay: 0.001, Strength: 0.2, Seed: 1, Progress: func(Point) { points++ }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Train != 400 || res.Test != 2000 || res.Inputs != 64 || res.Height != 8 || res.Width != 8 || points != len(res.Points) {
		t.Fatalf("result %+v, %d points reported", res, points)
	}
	var r0, r1 Point
	for _, p := range res.Points {
		if p.Model == "rfm" && p.Time == 0 {
			r0 = p
		}
		if p.Model == "rfm" && p.Time == 1 {
			r1 = p
		}
	}
	if !(r0.TestAcc < 95 && r1.TestAcc > 99 && r0.FocusMass < 0.05 && r1.FocusMass > 0.5) {
		t.Errorf("marker, RFM rounds 0 and 1: %+v %+v", r0, r1)
	}
	if _, ok := res.Summary["network"]; !ok {
		t.Errorf("summary %v lacks the network", res.Summary)
	}
}

// The halves images are twice as wide, the focus is their left half, the
// control accuracy is measured, and WriteFiles writes every figure and the
// JSON.
func TestHalvesFiles(t *testing.T) {
	res, err := Run(context.Background(), digits(300, 3), digits(300, 4), Options{Kind: Halves, N: 100, Epochs: 2, Rounds: 1, LR: 0.05, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Inputs != 128 || res.Width != 16 || res.Focus != "the left (simple) half" || len(res.NetworkDiag) != 128 || len(res.RFMDiag) != 128 {
		t.Fatalf("%+v", res)
	}
	for _, p := range res.Points {
		if !(p.TestAcc2 > 0) {
			t.Errorf("no control accuracy: %+v", p)
		}
	}
	dir := t.TempDir()
	if err := WriteFiles(context.Background(), dir, res); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"network_accuracy.png", "rfm_accuracy.png", "network_diag.png", "rfm_diag.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "phenomena.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil || back.Kind != Halves || len(back.Points) != len(res.Points) {
		t.Errorf("phenomena.json: %v, %+v", err, back)
	}
}

// Bad options and a set without the halves' digits are errors, not panics.
func TestBadOptions(t *testing.T) {
	good := Options{Kind: Marker, N: 100, Epochs: 1, Rounds: 1, LR: 0.05}
	for _, o := range []Options{{Kind: "spiral", N: 100, Epochs: 1, Rounds: 1, LR: 0.05}, {Kind: Marker, N: 5, Epochs: 1, Rounds: 1, LR: 0.05},
		{Kind: Marker, N: 100, Epochs: 1, Rounds: 1, LR: 0.05, WeightDecay: -1}} {
		if err := o.Check(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if err := good.Check(); err != nil {
		t.Error(err)
	}
	few := digits(30, 5)
	for i := range few.Y {
		few.Y[i] = 0
	}
	good.Kind = Halves
	if _, err := Run(context.Background(), few, few, good); err == nil {
		t.Error("halves without 1, 3 and 5: no error")
	}
}

// On the shared MNIST digits, the halves: both models weigh the simple
// half and fall toward chance when it is scrambled.
func TestHalvesMNIST(t *testing.T) {
	train, test, err := mnist.Load("../../../shared/data/mnist")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), train, test, Options{Kind: Halves, N: 300, Epochs: 10, Rounds: 2, LR: 0.05, WeightDecay: 0.001, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]Point{}
	for _, p := range res.Points {
		last[p.Model] = p
	}
	for _, m := range []string{"network", "rfm"} {
		p := last[m]
		if !(p.TestAcc > 97 && p.TestAcc2 < 70 && p.FocusMass > 0.55) {
			t.Errorf("halves, %s: %+v", m, p)
		}
	}
}

// A learning rate that blows the network up is an error naming it.
func TestDivergence(t *testing.T) {
	_, err := Run(context.Background(), digits(200, 1), digits(200, 2), Options{Kind: Marker, N: 100, Epochs: 3, Rounds: 1, LR: 1000, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "diverged") {
		t.Errorf("lr 1000: %v", err)
	}
}
