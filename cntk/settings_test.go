package cntk

import (
	"strings"
	"testing"
)

// Settings check themselves naming the flag and make the mask asked for.
func TestSettings(t *testing.T) {
	ok := Settings{Kernel: "cntk", Bandwidth: 2, S: 2, Filter: 3, Prior: "uniform", High: 0.1, Tol: 1e-5, MaxIter: 10, ExactMax: 100,
		Precond: "block", SelectHoldout: 0.1, SelectCrop: 16, SelectCrops: 1, Missing: 0.5, HoleSize: 4, Seed: 1}
	coord, arch, opt, err := ok.Check()
	if err != nil || coord >= 0 || arch.S != 2 || opt.Tol != 1e-5 || opt.Precond != PrecondBlock {
		t.Fatalf("%v %+v %+v %v", coord, arch, opt, err)
	}
	l := ok
	l.Kernel = "laplace"
	if coord, _, _, err := l.Check(); err != nil || coord != CoordLaplace {
		t.Errorf("laplace: %v %v", coord, err)
	}
	for _, c := range []struct {
		edit func(*Settings)
		want string
	}{
		{func(s *Settings) { s.Kernel = "rbf" }, `--kernel "rbf"`},
		{func(s *Settings) { s.Prior = "x" }, `--prior "x"`},
		{func(s *Settings) { s.Low = 1 }, "--prior-low 1 must be below"},
		{func(s *Settings) { s.Tol = 2 }, "--tol 2"},
		{func(s *Settings) { s.Precond = "x" }, `--precond "x"`},
		{func(s *Settings) { s.Holes = 2 }, "give one of --mask, --missing, --holes"},
	} {
		s := ok
		c.edit(&s)
		if _, _, _, err := s.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	m, err := ok.LoadMask(8, 8)
	if err != nil || len(m) != 64 || countTrue(m) != 32 {
		t.Errorf("random mask: %d observed, %v", countTrue(m), err)
	}
	h := Settings{Holes: 1, HoleSize: 4, Seed: 1}
	if m, err := h.LoadMask(8, 8); err != nil || countTrue(m) != 48 {
		t.Errorf("holes mask: %d observed, %v", countTrue(m), err)
	}
	if m, err := (&Settings{}).LoadMask(8, 8); m != nil || err != nil {
		t.Errorf("no mask setting: %v %v", m, err)
	}
}

// Candidates combine the selection lists (an empty list: the current
// value); ParseHeatmap checks the pixel and each s against the grid.
func TestCandidatesAndHeatmap(t *testing.T) {
	arch := Arch{S: 2, Filter: 3}
	c, err := Candidates([]string{"1", "2"}, nil, []string{"0", "0.1"}, arch, 0)
	if err != nil || len(c) != 4 || c[3] != (Candidate{S: 2, Filter: 3, Ridge: 0.1}) {
		t.Errorf("%v %v", c, err)
	}
	if c, err := Candidates(nil, []string{"5"}, nil, arch, 0.5); err != nil || len(c) != 1 || c[0] != (Candidate{S: 2, Filter: 5, Ridge: 0.5}) {
		t.Errorf("%v %v", c, err)
	}
	for _, bad := range [][3][]string{{{"a"}, nil, nil}, {nil, {"4"}, nil}, {nil, nil, {"-1"}}} {
		if _, err := Candidates(bad[0], bad[1], bad[2], arch, 0); err == nil || !strings.Contains(err.Error(), "--select-") {
			t.Errorf("%v: %v", bad, err)
		}
	}
	x, y, ss, err := ParseHeatmap("3, 5", nil, arch, 32, 32)
	if err != nil || x != 3 || y != 5 || len(ss) != 4 {
		t.Errorf("%d %d %v %v", x, y, ss, err)
	}
	for at, want := range map[string]string{"3": "want X,Y (column, row)", "16,0": "0 ≤ X < 16"} {
		if _, _, _, err := ParseHeatmap(at, nil, arch, 16, 16); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v", at, err)
		}
	}
	if _, _, _, err := ParseHeatmap("1,1", []string{"4"}, arch, 16, 16); err == nil || !strings.Contains(err.Error(), "--heatmap-s 4") {
		t.Errorf("s = 4 on 16×16: %v", err)
	}
}
