package main

import (
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const dataDir = "../../../shared/data/mnist"

// A small run of the whole example: every choice made, four models
// tested, the figures written and decodable, diag(M) on the digit field.
func TestExampleSmall(t *testing.T) {
	if _, err := os.Stat(dataDir); err != nil {
		t.Fatalf("the MNIST files are required for this test: %v", err)
	}
	out := t.TempDir()
	rep, err := run(context.Background(), options{data: dataDir, out: out, n: 600, valFraction: 0.2, iters: 2, seed: 3, quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Final) != 4 {
		t.Fatalf("%d final models, want Laplace, NTK, RFM, RFM (NTK)", len(rep.Final))
	}
	for _, f := range rep.Final {
		// 600 digits already give ~88%; far below means something broke.
		if !(f.TestAccuracy > 0.75 && f.TestAccuracy <= 1) {
			t.Errorf("%s: test accuracy %v", f.Name, f.TestAccuracy)
		}
		if f.Name == "RFM" && f.Round < 1 {
			t.Errorf("RFM chose round %d: must be a learned M", f.Round)
		}
	}
	if got := len(rep.Trials["laplace"]) + len(rep.Trials["rfm"]) + len(rep.Trials["ntk"]) + len(rep.Trials["rfm-ntk"]); got != 8+4+6+6 {
		t.Errorf("%d trials, want 24", got)
	}
	if rep.TrainDigits < 590 || rep.TestDigits != 10000 || rep.ValidationDigits < 100 {
		t.Errorf("sizes: %+v", rep)
	}
	// The digits occupy the middle of the image; the border is blank.
	if !(rep.CentralShare > 0.7 && rep.CentralShare <= 1) {
		t.Errorf("central 20×20 share of diag(M) = %v", rep.CentralShare)
	}
	files := []string{"diag_m.png", "spectrum.png", "rounds.png"}
	if strings.Contains(rep.Final[2].Setting, "M=full") {
		files = append(files, "eigenvectors.png") // eigenvectors of a diagonal M are single pixels
	}
	for _, name := range files {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 300 {
			t.Errorf("%s is %v", name, b)
		}
	}
	raw, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back report
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.CentralShare != rep.CentralShare || len(back.Final) != 4 {
		t.Errorf("results.json does not match the run")
	}
}

func TestExampleBadFlags(t *testing.T) {
	for _, o := range []options{
		{data: dataDir, out: t.TempDir(), n: -1, valFraction: 0.2, iters: 1},
		{data: dataDir, out: t.TempDir(), valFraction: 1, iters: 1},
		{data: dataDir, out: t.TempDir(), valFraction: 0.2, iters: 0},
		{data: t.TempDir(), out: t.TempDir(), valFraction: 0.2, iters: 1},
	} {
		if _, err := run(context.Background(), o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}
