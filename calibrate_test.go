package rfm

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/synth"
)

// Labels drawn from softmax(z/T₀) for known scores z: temperature scaling
// finds T₀, lowers the log-loss, and never changes the predicted class.
func TestTemperatureRecoversT(t *testing.T) {
	const n, c, t0 = 20000, 3, 0.4
	r := rand.New(rand.NewPCG(1, 2))
	s := make([]float64, n*c)
	labels := make([]int, n)
	row := make([]float64, c)
	for i := 0; i < n; i++ {
		for k := 0; k < c; k++ {
			s[i*c+k] = r.Float64()
		}
		copy(row, s[i*c:i*c+c])
		softmax(row, 1/t0)
		u, l := r.Float64(), 0
		for u > row[l] && l < c-1 {
			u -= row[l]
			l++
		}
		labels[i] = l
	}
	cal, err := FitCalibration(CalibrateTemperature, s, labels, c)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(cal.Temperature-t0) > 0.05*t0 {
		t.Errorf("temperature %v, want %v within 5%%", cal.Temperature, t0)
	}
	if !(cal.LogLossAfter < cal.LogLossBefore) || cal.Rows != n {
		t.Errorf("log-loss %v → %v on %d rows", cal.LogLossBefore, cal.LogLossAfter, cal.Rows)
	}
	p := slices.Clone(s)
	cal.Apply(p, n, c)
	if got, want := Argmax(p, n, c), Argmax(s, n, c); !slices.Equal(got, want) {
		t.Error("temperature scaling changed a predicted class")
	}
	if err := cal.Validate(c); err != nil {
		t.Error(err)
	}
}

// On a few validation rows that are all right, the temperature is not
// driven to its bound: the mean top probability stays at the rule of
// succession's (n+1)/(n+2).
func TestTemperatureCappedOnFewRows(t *testing.T) {
	const n, c = 8, 3
	s := make([]float64, n*c)
	labels := make([]int, n)
	for i := 0; i < n; i++ {
		labels[i] = i % c
		s[i*c+labels[i]] = 0.9 // every row right, by a wide margin
		s[i*c+(labels[i]+1)%c] = 0.1
	}
	cal, err := FitCalibration(CalibrateTemperature, s, labels, c)
	if err != nil {
		t.Fatal(err)
	}
	p := slices.Clone(s)
	cal.Apply(p, n, c)
	conf := 0.0
	for i := 0; i < n; i++ {
		conf += slices.Max(p[i*c:i*c+c]) / n
	}
	limit := float64(n+1) / float64(n+2)
	t.Logf("temperature %.4g, mean top probability %.4f (limit %.4f)", cal.Temperature, conf, limit)
	if conf > limit+1e-6 || conf < limit-1e-3 {
		t.Errorf("mean top probability %.6f, want the cap %.6f", conf, limit)
	}
}

// powerLabels draws n rows of c scores and labels from the clipped scores
// to the power b0 (b0 < 1: the scores overstate).
func powerLabels(r *rand.Rand, n, c int, b0 float64) ([]float64, []int) {
	s, labels := make([]float64, n*c), make([]int, n)
	row := make([]float64, c)
	for i := 0; i < n; i++ {
		for k := 0; k < c; k++ {
			s[i*c+k] = r.Float64() * r.Float64()
		}
		copy(row, s[i*c:i*c+c])
		logClipped(row)
		softmax(row, b0)
		u, l := r.Float64(), 0
		for u > row[l] && l < c-1 {
			u -= row[l]
			l++
		}
		labels[i] = l
	}
	return s, labels
}

// The power family contains the model as fitted (β = 1 gives the clipped
// scores), recovers an overconfident model's β < 1, keeps a perfectly
// separated model's confidence (the cap stops at β = 1, where the
// temperature's cap flattens it), and for the logistic head is temperature
// scaling.
func TestPowerCalibration(t *testing.T) {
	const c = 3
	one := &Calibration{Method: CalibratePower, Power: 1}
	s := []float64{0.7, 0.2, 0.1, -0.1, 0.5, 0.6, 1.2, 0, 0}
	got, want := slices.Clone(s), slices.Clone(s)
	one.Apply(got, 3, c)
	Probabilities(want, 3, c)
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("β = 1: %v, want the clipped scores %v", got, want)
		}
	}

	// Labels drawn from p^β₀ with β₀ = 0.5: the scores overstate.
	const n, b0 = 20000, 0.5
	s, labels := powerLabels(rand.New(rand.NewPCG(5, 6)), n, c, b0)
	cal, err := FitCalibration(CalibratePower, s, labels, c)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(cal.Power-b0) > 0.05*b0 || !(cal.LogLossAfter < cal.LogLossBefore) {
		t.Errorf("power %v (want %v within 5%%), log-loss %v → %v", cal.Power, b0, cal.LogLossBefore, cal.LogLossAfter)
	}
	p := slices.Clone(s)
	cal.Apply(p, n, c)
	if !slices.Equal(Argmax(p, n, c), Argmax(s, n, c)) {
		t.Error("power calibration changed a predicted class")
	}

	// Eight rows, all right by a wide margin: the temperature's cap makes
	// them less sure than the clipped scores; the power's stops at β = 1.
	const m = 8
	s = make([]float64, m*c)
	labels = labels[:m]
	for i := 0; i < m; i++ {
		labels[i] = i % c
		s[i*c+labels[i]] = 0.98
		s[i*c+(labels[i]+1)%c] = 0.02
	}
	cal, err = FitCalibration(CalibratePower, s, labels, c)
	if err != nil {
		t.Fatal(err)
	}
	if cal.Power != 1 || cal.LogLossAfter != cal.LogLossBefore {
		t.Errorf("separated rows: power %v, log-loss %v → %v; want β = 1, unchanged", cal.Power, cal.LogLossBefore, cal.LogLossAfter)
	}

	// On ten rows, two of them confident errors, the prior keeps β nearer
	// 1 than the plain fit of the log-loss.
	s = make([]float64, 10*c)
	labels = make([]int, 10)
	for i := 0; i < 10; i++ {
		labels[i] = i % c
		top := labels[i]
		if i < 2 {
			top = (top + 1) % c
		}
		s[i*c+top] = 0.9
	}
	ls := slices.Clone(s)
	for i := 0; i < 10; i++ {
		logClipped(ls[i*c : i*c+c])
	}
	plain, shrunk := fitInverseTemperature(ls, labels, c), fitPower(ls, labels, c)
	if !(math.Abs(math.Log(shrunk)) < 0.8*math.Abs(math.Log(plain))) {
		t.Errorf("ten rows: the prior's β %.4g is not nearer 1 than the plain fit's %.4g", shrunk, plain)
	}

	// The logistic head's base is softmax(s): the power is a temperature.
	base := &Calibration{Method: CalibrateTemperature, Temperature: 1}
	cal, err = fitCalibration(CalibratePower, s, labels, c, base)
	if err != nil {
		t.Fatal(err)
	}
	if cal.Method != CalibrateTemperature || !(cal.Temperature > 0 && cal.Temperature <= 1) {
		t.Errorf("logistic head: %+v, want a temperature ≤ 1", cal)
	}
}

// Isotonic maps are non-decreasing, probabilities sum to one, and on
// scores that rank the classes perfectly the fitted map separates them.
func TestIsotonic(t *testing.T) {
	const n, c = 2000, 2
	r := rand.New(rand.NewPCG(3, 4))
	s := make([]float64, n*c)
	labels := make([]int, n)
	for i := 0; i < n; i++ {
		x := r.Float64()
		s[i*c], s[i*c+1] = 1-x, x
		// Class 1 with probability x²: scores rank but overstate it.
		if r.Float64() < x*x {
			labels[i] = 1
		}
	}
	cal, err := FitCalibration(CalibrateIsotonic, s, labels, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := cal.Validate(c); err != nil {
		t.Fatal(err)
	}
	if !(cal.LogLossAfter < cal.LogLossBefore) {
		t.Errorf("isotonic log-loss %v → %v", cal.LogLossBefore, cal.LogLossAfter)
	}
	// At score x = 0.5 the truth is 0.25 for class 1.
	q := []float64{0.5, 0.5}
	cal.Apply(q, 1, c)
	if math.Abs(q[1]-0.25) > 0.08 || math.Abs(q[0]+q[1]-1) > 1e-12 {
		t.Errorf("isotonic probability at x = 0.5: %v, want about 0.25", q)
	}
	// Equal scores share one knot: the map is a function.
	cal2, err := FitCalibration(CalibrateIsotonic, []float64{0, 1, 0, 1, 1, 0}, []int{1, 0, 0}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := cal2.Validate(2); err != nil {
		t.Errorf("tied scores: %v", err)
	}
}

func TestCalibrationRejects(t *testing.T) {
	for _, tc := range []struct {
		cal  Calibration
		want string
	}{
		{Calibration{Method: CalibrateTemperature}, "temperature 0"},
		{Calibration{Method: CalibrateTemperature, Temperature: math.Inf(1)}, "temperature +Inf"},
		{Calibration{Method: "platt"}, `unknown method "platt"`},
		{Calibration{Method: CalibratePower, Power: -1}, "power -1"},
		{Calibration{Method: CalibratePower, Power: math.NaN()}, "power NaN"},
		{Calibration{Method: CalibrateIsotonic, Isotonic: []IsotonicMap{{X: []float64{0}, Y: []float64{0.5}}}}, "1 isotonic maps for 2 classes"},
		{Calibration{Method: CalibrateIsotonic, Isotonic: []IsotonicMap{{X: []float64{0, 1}, Y: []float64{0.5, 0.4}}, {X: []float64{0}, Y: []float64{1}}}}, "not increasing"},
		{Calibration{Method: CalibrateIsotonic, Isotonic: []IsotonicMap{{X: []float64{0}, Y: []float64{1.5}}, {X: []float64{0}, Y: []float64{1}}}}, "not increasing within [0, 1]"},
	} {
		if err := tc.cal.Validate(2); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cal, err, tc.want)
		}
	}
	if _, err := FitCalibration(CalibrateTemperature, []float64{1}, []int{0}, 1); err == nil {
		t.Error("a one-class calibration was accepted")
	}
}

// A fit with Calibrate stores the map fitted on its holdout (or says why
// it left it out); PredictProba
// applies it; a save/load round trip keeps it and writes format version 2
// (version 1 without); a calibration on a regression model is refused.
func TestFitCalibrated(t *testing.T) {
	s, err := synth.Generate(synth.Product, 400, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	labels := make([]int, s.N)
	for i, v := range s.Y {
		if v > 0 {
			labels[i] = 1
		}
	}
	ds := &Dataset{X: s.X, N: s.N, D: s.D, Labels: labels}
	ctx := context.Background()
	for _, method := range []CalibrationMethod{CalibrateNone, CalibrateTemperature, CalibratePower, CalibrateIsotonic} {
		cfg := DefaultConfig()
		cfg.Iters, cfg.Calibrate = 1, method
		m, err := Fit(ctx, cfg, ds, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		// A map that does not help across 4 parts of the holdout is left
		// out, and the note says so (temperature and isotonic here: 80
		// rows; power keeps β = 1).
		leftOut := strings.Contains(m.Note, string(method)+" calibration left out")
		if method == CalibrateNone && m.Calibration != nil || method != CalibrateNone && m.Calibration == nil && !leftOut {
			t.Fatalf("%s: calibration %+v, note %q", method, m.Calibration, m.Note)
		}
		if method == CalibratePower && m.Calibration == nil {
			t.Fatalf("power: no calibration stored")
		}
		scores, _ := m.Predict(ctx, s.X[:20*s.D], 20)
		p, _ := m.PredictProba(ctx, s.X[:20*s.D], 20)
		want := slices.Clone(scores)
		if m.Calibration != nil {
			if m.Calibration.Rows != 80 { // the 20% holdout
				t.Errorf("%s: fitted on %d rows, want 80", method, m.Calibration.Rows)
			}
			m.Calibration.Apply(want, 20, 2)
		} else {
			Probabilities(want, 20, 2)
		}
		if !slices.Equal(p, want) {
			t.Errorf("%s: PredictProba is not the calibration of the scores", method)
		}
		raw := slices.Clone(scores)
		Probabilities(raw, 20, 2)
		if pu, _ := m.UncalibratedProba(ctx, s.X[:20*s.D], 20); !slices.Equal(pu, raw) {
			t.Errorf("%s: UncalibratedProba is not the clipped scores", method)
		}
		var buf bytes.Buffer
		if err := m.Save(&buf, nil); err != nil {
			t.Fatal(err)
		}
		version := binary.LittleEndian.Uint32(buf.Bytes()[8:12])
		if wantV := map[bool]uint32{false: 1, true: 2}[m.Calibration != nil]; version != wantV {
			t.Errorf("%s: file version %d, want %d", method, version, wantV)
		}
		back, _, err := Load(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		p2, _ := back.PredictProba(ctx, s.X[:20*s.D], 20)
		if !slices.Equal(p, p2) {
			t.Errorf("%s: probabilities changed on a save/load round trip", method)
		}
	}
	// Regression ignores Calibrate; a file that pairs them is refused.
	cfg := DefaultConfig()
	cfg.Iters, cfg.Calibrate = 1, CalibrateTemperature
	reg, err := Fit(ctx, cfg, &Dataset{X: s.X, N: s.N, D: s.D, Y: s.Y, Outputs: 1}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reg.Calibration != nil {
		t.Fatal("a regression model was calibrated")
	}
	reg.Calibration = &Calibration{Method: CalibrateTemperature, Temperature: 1}
	var buf bytes.Buffer
	if err := reg.Save(&buf, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(&buf); err == nil || !strings.Contains(err.Error(), "regression model with a calibration") {
		t.Errorf("regression model with a calibration: %v", err)
	}
}

// Recalibrate with folds keeps a calibration that helps across them and
// leaves out one that does not (β = 1, and the note says so).
func TestRecalibrateCrossChecked(t *testing.T) {
	const c = 3
	draw := func(n int, b0 float64, seed uint64) ([]float64, []int, []int) {
		s, labels := powerLabels(rand.New(rand.NewPCG(seed, 9)), n, c, b0)
		folds := make([]int, n)
		for i := range folds {
			folds[i] = i % 4
		}
		return s, labels, folds
	}
	m := &Model{Header: Header{Task: Classification, Outputs: c}}
	s, labels, folds := draw(4000, 0.4, 1)
	if err := m.Recalibrate(CalibratePower, s, labels, folds); err != nil {
		t.Fatal(err)
	}
	if cal := m.Calibration; cal == nil || math.Abs(cal.Power-0.4) > 0.05 || m.Note != "" {
		t.Errorf("4 000 overconfident rows: %+v, note %q; want β near 0.4 kept", cal, m.Note)
	}
	// Scores already calibrated (β₀ = 1), 200 rows: nothing to gain.
	m = &Model{Header: Header{Task: Classification, Outputs: c}}
	s, labels, folds = draw(200, 1, 2)
	if err := m.Recalibrate(CalibratePower, s, labels, folds); err != nil {
		t.Fatal(err)
	}
	if cal := m.Calibration; cal == nil || cal.Power != 1 || !strings.Contains(m.Note, "power calibration left out") {
		t.Errorf("200 calibrated rows: %+v, note %q; want β = 1 and a note", cal, m.Note)
	}
	if err := m.Recalibrate(CalibratePower, s, labels, folds[:5]); err == nil {
		t.Error("fold numbers for other rows were accepted")
	}
}

// Without folds (a holdout's scores) the calibration is checked across 4
// interleaved parts of the rows: kept on many overconfident rows, left out
// on calibrated ones; under 40 rows it is left out (too few to check).
func TestRecalibrateHoldoutChecked(t *testing.T) {
	const c = 3
	m := &Model{Header: Header{Task: Classification, Outputs: c}}
	s, labels := powerLabels(rand.New(rand.NewPCG(3, 9)), 2000, c, 0.4)
	if err := m.Recalibrate(CalibratePower, s, labels, nil); err != nil {
		t.Fatal(err)
	}
	if cal := m.Calibration; cal == nil || math.Abs(cal.Power-0.4) > 0.08 || m.Note != "" {
		t.Errorf("2 000 overconfident rows: %+v, note %q; want β near 0.4 kept", cal, m.Note)
	}
	// Left out, β = 1 and a note saying why: calibrated rows (nothing to
	// gain), and overconfident ones too few to check.
	for _, tc := range []struct {
		seed uint64
		n    int
		b0   float64
		note string
	}{{4, 400, 1, "power calibration left out"}, {5, 39, 0.2, "39 held-out rows are too few"}} {
		m := &Model{Header: Header{Task: Classification, Outputs: c}}
		s, labels := powerLabels(rand.New(rand.NewPCG(tc.seed, 9)), tc.n, c, tc.b0)
		if err := m.Recalibrate(CalibratePower, s, labels, nil); err != nil {
			t.Fatal(err)
		}
		if cal := m.Calibration; cal == nil || cal.Power != 1 || !strings.Contains(m.Note, tc.note) {
			t.Errorf("%d rows of β₀ = %v: %+v, note %q; want β = 1 and a note %q", tc.n, tc.b0, cal, m.Note, tc.note)
		}
	}
	if p := checkParts(41); len(p) != 41 || p[40] != 0 || p[3] != 3 {
		t.Errorf("41 rows: parts %v", p)
	}
}
