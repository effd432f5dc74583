package inpaint

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/cntk"
)

func defaults(dir string) Options {
	return Options{Images: dir, Out: filepath.Join(dir, "out"), Work: filepath.Join(dir, "work"), Tasks: "holes,random50", Methods: "cntk,laplace",
		SHoles: 4, SRandom: 3, SelectS: "3,4,5", SelectFilter: "3,5", SelectRidge: "0", SelectCrops: 2, Tol: 1e-5, Bandwidth: 2, Seed: 1}
}

// Check names the option at fault; the holes try only s ≥ SHoles; the
// child's arguments are the task's mask flags and the selection.
func TestOptions(t *testing.T) {
	dir := t.TempDir()
	o := defaults(dir)
	tasks, methods, err := o.Check()
	if err != nil || !slices.Equal(tasks, []string{"holes", "random50"}) || !slices.Equal(methods, []string{"cntk", "laplace"}) {
		t.Fatalf("%v %v %v", tasks, methods, err)
	}
	for _, c := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.Tasks = "blur" }, `unknown task "blur"`},
		{func(o *Options) { o.Methods = "biharmonic" }, "reference script"},
		{func(o *Options) { o.SHoles = 9 }, "--s-holes 9"},
		{func(o *Options) { o.Tol = 1 }, "--tol 1"},
		{func(o *Options) { o.SelectRidge = "-1" }, `--select-ridge "-1"`},
		{func(o *Options) { o.Images = filepath.Join(dir, "nowhere") }, "--images"},
	} {
		o := defaults(dir)
		c.edit(&o)
		if _, _, err := o.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	if got := o.selectS("holes"); got != "4,5" {
		t.Errorf("selectS(holes) = %q", got)
	}
	if o.SHoles = 6; o.selectS("holes") != "6" || o.selectS("random50") != "3,4,5" {
		t.Errorf("selectS: %q %q", o.selectS("holes"), o.selectS("random50"))
	}
	args, err := o.args("a.png", filepath.Join(dir, "a-random50"), "random50", "cntk")
	if err != nil || !strings.Contains(strings.Join(args, " "), "--missing 0.5 --seed 1 --mask-out "+filepath.Join(dir, "a-random50-mask.png")+" --s 3 --select-s 3,4,5") {
		t.Errorf("%v %v", args, err)
	}
	if _, err := o.args("a.png", filepath.Join(dir, "a-random50"), "random50", "laplace"); err == nil || !strings.Contains(err.Error(), "run the cntk method first") {
		t.Errorf("laplace without a mask: %v", err)
	}
}

// The reference rows read back as runs; the summary averages per task and
// method and names what was not run; the grid is drawn from the files in
// work.
func TestResults(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "reference.csv")
	if err := os.WriteFile(ref, []byte("image,task,method,psnr,psnr_missing,ssim,seconds,peak_mb\nb,random50,biharmonic,40,37.5,0.99,1.5,100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runs, err := ReadReference(ref)
	if err != nil || len(runs) != 1 || runs[0].PSNR != 40 || runs[0].Record()[10] != "" {
		t.Fatalf("%+v %v", runs, err)
	}
	if err := os.WriteFile(ref, []byte("a,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadReference(ref); err == nil || !strings.Contains(err.Error(), "want the header") {
		t.Errorf("bad header: %v", err)
	}
	runs = append(runs, Run{Image: "b", Task: "random50", Method: "cntk", PSNR: 30, SSIM: 0.9, S: 3, Filter: 3, Iterations: 7, Converged: "true"},
		Run{Image: "c", Task: "random50", Method: "cntk", PSNR: 32, SSIM: 0.8, S: 3, Filter: 3})
	if err := WriteResults(context.Background(), dir, runs, true, []string{"d random50 laplace"}); err != nil {
		t.Fatal(err)
	}
	sum, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	for _, want := range []string{"| 50% random pixels missing | cntk | 31.00 |", "| 50% random pixels missing | biharmonic | 40.00 |", "not in the means: d random50 laplace", "| b | random50 | cntk | 30.00 |"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, sum)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "runs.csv"))
	if !strings.HasPrefix(string(csv), strings.Join(CSVHeader, ",")+"\n") || !strings.Contains(string(csv), "b,random50,cntk,30.000,0.000,0.9000,0.00,0.0,3,3,0,7,0,true") {
		t.Errorf("runs.csv:\n%s", csv)
	}
	// A grid of the original, the masked image (all missing: magenta from
	// column 8 on) and one result, at half size with gaps of 4.
	img := &cntk.Image{H: 8, W: 8, C: 1, Pix: make([]float64, 64)}
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o755)
	for path, m := range map[string]*cntk.Image{filepath.Join(dir, "b.png"): img, filepath.Join(work, "b-random50-cntk.png"): img,
		filepath.Join(work, "b-random50-mask.png"): cntk.MaskImage(make([]bool, 64), 8, 8)} {
		if err := m.Save(context.Background(), path); err != nil {
			t.Fatal(err)
		}
	}
	grid := filepath.Join(dir, "grid.png")
	if err := Grid(context.Background(), grid, dir, work, []string{"b", "c"}, "random50", []string{"cntk", "laplace"}); err != nil {
		t.Fatal(err)
	}
	g, err := cntk.LoadPNG(grid)
	if err != nil || g.W != 3*(4+4)-4 || g.H != 4 || g.Pix[8*3] != 1 || g.Pix[8*3+1] != 0 {
		t.Errorf("grid: %v, %v", g, err)
	}
}
