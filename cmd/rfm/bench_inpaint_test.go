package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	benchinpaint "github.com/rfmkit/rfm/bench/inpaint"
	"github.com/rfmkit/rfm/cntk"
)

// TestBenchInpaint runs the benchmark on two tiny images: both methods on
// the same mask, scores that match a recomputation, the reference rows
// joined, and a rerun that reuses the runs.
func TestBenchInpaint(t *testing.T) {
	dir := t.TempDir()
	imgs := filepath.Join(dir, "imgs")
	if err := os.Mkdir(imgs, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestPNG(t, filepath.Join(imgs, "a.png"), smoothRGB(32, 32))
	gray := &cntk.Image{H: 32, W: 32, C: 1, Pix: make([]float64, 32*32)}
	for i := range gray.Pix {
		gray.Pix[i] = 0.3 + 0.4*float64(i%32)/32
	}
	writeTestPNG(t, filepath.Join(imgs, "b.png"), gray)
	out := filepath.Join(dir, "res")
	ref := "image,task,method,psnr,psnr_missing,ssim,seconds,peak_mb\nb,random50,biharmonic,40.5,37.5,0.99,1.5,100\nzzz,random50,biharmonic,1,1,0.1,1,1\n"
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(out, "reference.csv"), ref)
	args := []string{"bench", "inpaint", "--images", "imgs", "--out", "res", "--work", "work", "--tasks", "random50",
		"--select-s", "1,2", "--select-filter", "3", "--quiet"}
	r := rfmCmd(t, dir, args...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	f, err := os.Open(filepath.Join(out, "runs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+4+1 {
		t.Fatalf("%d rows in runs.csv, want header + 2 images × 2 methods + 1 reference row: %v", len(recs), recs)
	}
	for _, rec := range recs[1:5] {
		if rec[2] == "cntk" && rec[8] != "1" && rec[8] != "2" {
			t.Errorf("cntk ran at s = %s, not one of the selected values", rec[8])
		}
		// The score recomputed from the files.
		base := filepath.Join(dir, "work", rec[0]+"-"+rec[1])
		p, _, s, err := benchinpaint.Score(filepath.Join(imgs, rec[0]+".png"), base+"-mask.png", base+"-"+rec[2]+".png")
		if err != nil {
			t.Fatal(err)
		}
		if rec[3] != strconv.FormatFloat(p, 'f', 3, 64) || rec[5] != strconv.FormatFloat(s, 'f', 4, 64) {
			t.Errorf("%v: PSNR %s SSIM %s, recomputed %.3f %.4f", rec[:3], rec[3], rec[5], p, s)
		}
	}
	if last := recs[5]; last[0] != "b" || last[2] != "biharmonic" || last[3] != "40.500" {
		t.Errorf("the reference row is %v", last)
	}
	sum, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 50% random pixels missing | cntk |", "| 50% random pixels missing | biharmonic | 40.50 |"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, sum)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "grid_random50.png")); err != nil {
		t.Error(err)
	}
	// A rerun reads the runs back instead of running them again.
	rep := filepath.Join(dir, "work", "a-random50-cntk.json")
	st, err := os.Stat(rep)
	if err != nil {
		t.Fatal(err)
	}
	old := st.ModTime().Add(-time.Hour)
	if err := os.Chtimes(rep, old, old); err != nil {
		t.Fatal(err)
	}
	if r := rfmCmd(t, dir, args...); r.code != 0 {
		t.Fatalf("rerun: exit %d: %s", r.code, r.stderr)
	}
	if st, _ := os.Stat(rep); !st.ModTime().Equal(old) {
		t.Error("the rerun ran a run whose report was there")
	}
	// --collect runs nothing: a run whose report is gone is left out and named.
	if err := os.Remove(filepath.Join(dir, "work", "b-random50-laplace.json")); err != nil {
		t.Fatal(err)
	}
	coll := append([]string{"bench", "inpaint", "--images", "imgs", "--out", "coll"}, args[6:]...)
	r = rfmCmd(t, dir, append(coll, "--collect")...)
	if r.code != 0 || !strings.Contains(r.stderr, "1 runs not in") || !strings.Contains(r.stderr, "b random50 laplace") {
		t.Fatalf("--collect: exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "work", "b-random50-laplace.json")); err == nil {
		t.Error("--collect ran a missing run")
	}
	if sum, _ := os.ReadFile(filepath.Join(dir, "coll", "summary.md")); !strings.Contains(string(sum), "not run, so not in the means: b random50 laplace") {
		t.Errorf("summary.md of --collect does not name the missing run:\n%s", sum)
	}
	// Another tolerance: the reports do not fit, the runs are redone.
	if r := rfmCmd(t, dir, append(args, "--tol", "1e-6")...); r.code != 0 {
		t.Fatalf("rerun with --tol: exit %d: %s", r.code, r.stderr)
	}
	if st, _ := os.Stat(rep); st.ModTime().Equal(old) {
		t.Error("a report made with another --tol was reused")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--images", "imgs", "--tasks", "blur"}, "unknown task \"blur\""},
		{[]string{"--images", "imgs", "--methods", "biharmonic"}, "reference script"},
		{[]string{"--images", "nowhere"}, "--images nowhere"},
		{[]string{"--images", "imgs", "--select-s", "a"}, "--select-s \"a\""},
		{[]string{"--images", "imgs", "--reference", "imgs/a.png"}, "--reference imgs/a.png"},
	} {
		r := rfmCmd(t, dir, append([]string{"bench", "inpaint", "--out", "res2", "--work", "work", "--no-select", "--s-random", "1", "--quiet"}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want an error with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
