package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rfmkit/rfm/mnist"
	"github.com/rfmkit/rfm/modelfile"
	"github.com/rfmkit/rfm/nn"
	"github.com/rfmkit/rfm/plot"
)

// Experiment is the whole memory experiment of thesis chapter 2 on one
// network: train (or resume) it on a Data, verify every example, recover
// the examples from the Recoveries' starts and draw the figures. The
// command 'rfm memory' is a flag front end to it.
type Experiment struct {
	Mode    string    // "autoencode" or "sequence", recorded in the Result
	Network nn.Config // the network to train (ignored when Resume is set)
	// Budget stops the training; its Checkpoint is the checkpoint file
	// (default memory.ckpt in Out, else the current folder).
	Budget nn.Budget
	// Resume continues training this checkpoint (its settings win).
	Resume string
	// RequireTarget makes a missed Budget.LossTarget an error (else a
	// warning in the log).
	RequireTarget bool
	// PowerIters, Arnoldi and Dense tune the verification (VerifyOptions).
	PowerIters, Arnoldi int
	Dense               bool
	Seed                uint64 // power iteration and recovery starts
	// MatchTol is the distance within which a limit is an example and
	// the largest fixed-point error of a stored example (0: MatchTol(s)).
	MatchTol   float64
	Recoveries []Recovery
	// Tol and MaxSteps stop the recovery iteration.
	Tol      float64
	MaxSteps int
	// Grid (points per side, 0: none), Arrows and Margin shape the basin
	// figure of 2-D examples.
	Grid, Arrows int
	Margin       float64
	// Out, when set, is the folder of summary.json, the figures and the
	// default checkpoint.
	Out string
	// Log, when set, receives the progress lines.
	Log func(format string, args ...any)
}

// Result is an Experiment's outcome (summary.json).
type Result struct {
	Data     string   `json:"data"`
	Mode     string   `json:"mode"`
	Examples int      `json:"examples"`
	Dim      int      `json:"dim"`
	Cycles   [][]int  `json:"cycles,omitempty"`
	Labels   []string `json:"labels,omitempty"`
	// Network is the trained network's settings (a resumed checkpoint's).
	Network  nn.Config      `json:"network"`
	Training nn.TrainResult `json:"training"`
	Resumed  string         `json:"resumed_from,omitempty"`
	// Ckpt is the checkpoint file that continues the training.
	Ckpt string  `json:"checkpoint"`
	Loss float64 `json:"final_loss"`
	// Verified holds every example's fixed-point error and top eigenvalue.
	Verified []Example `json:"verified"`
	Stored   int       `json:"stored"`
	CyclesOK int       `json:"stable_cycles"`
	MatchTol float64   `json:"match_tolerance"`
	// Recovery counts where each Recovery's starts ended, by its name.
	Recovery map[string]Summary `json:"recovery"`
	Basins   *BasinCounts       `json:"basins,omitempty"`
	Seconds  map[string]float64 `json:"seconds"`
}

// BasinCounts counts the basin grid's points by where they end.
type BasinCounts struct {
	Grid         int   `json:"grid"`
	PerExample   []int `json:"per_example"`
	Spurious     int   `json:"spurious"`
	NotConverged int   `json:"not_converged"`
}

// TopRadius is the largest top eigenvalue modulus of the verified examples.
func (r *Result) TopRadius() float64 {
	top := 0.0
	for _, ex := range r.Verified {
		top = max(top, ex.Radius)
	}
	return top
}

func (x *Experiment) logf(format string, args ...any) {
	if x.Log != nil {
		x.Log(format, args...)
	}
}

// checkpoint is the checkpoint file: Budget.Checkpoint or its default.
func (x *Experiment) checkpoint() string {
	if x.Budget.Checkpoint == "" {
		return filepath.Join(x.Out, "memory.ckpt")
	}
	return x.Budget.Checkpoint
}

// Run trains, verifies, recovers and, with Out, draws the figures and
// writes summary.json (atomically).
func (x *Experiment) Run(ctx context.Context, data *Data) (*Result, error) {
	res, net, period, err := x.TrainVerify(ctx, data)
	if err != nil {
		return nil, err
	}
	s, mt := data.Set, res.MatchTol
	start := time.Now()
	it := IterateOptions{Period: period, Tol: x.Tol, MaxSteps: x.MaxSteps}
	strips := map[string]*Recovered{}
	for ri, r := range x.Recoveries {
		rec, err := Recover(ctx, net, s, r, data.Height, x.Seed+uint64(ri), it, mt)
		if err != nil {
			return nil, err
		}
		sum := rec.Summary
		res.Recovery[r.Name] = sum
		x.logf("recovery from %s: %d of %d starts recovered, %d to another example, %d spurious (%d distinct), %d not converged; %d examples and %d cycles reached",
			r.Name, sum.Recovered, sum.Starts, sum.Other, sum.Spurious, sum.DistinctSpurious, sum.NotConverged, sum.Examples, sum.Cycles)
		strips[r.Name] = rec
	}
	res.Seconds["recovery"] = time.Since(start).Seconds()
	if x.Out == "" {
		return res, nil
	}
	start = time.Now()
	if err := x.figures(ctx, data, net, res, strips, it, mt); err != nil {
		return nil, err
	}
	res.Seconds["figures"] = time.Since(start).Seconds()
	return res, writeJSONFile(ctx, filepath.Join(x.Out, "summary.json"), res)
}

// writeJSONFile writes v as indented JSON to path, atomically.
func writeJSONFile(ctx context.Context, path string, v any) error {
	return modelfile.WriteAtomicContext(ctx, path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

// figures draws basins.png (2-D) or recovery.png (images) into Out.
func (x *Experiment) figures(ctx context.Context, data *Data, net *nn.Network, res *Result, strips map[string]*Recovered, it IterateOptions, mt float64) error {
	s := data.Set
	if s.D == 2 && x.Grid > 0 {
		b, err := BasinGrid(ctx, net, s, x.Grid, x.Margin, it, mt)
		if err != nil {
			return err
		}
		per, sp, nc := b.Counts(s.N)
		res.Basins = &BasinCounts{Grid: x.Grid, PerExample: per, Spurious: sp, NotConverged: nc}
		return BasinFigure(ctx, filepath.Join(x.Out, "basins.png"), net, s, b, x.Arrows)
	}
	if data.Height == 0 || s.D%data.Height != 0 {
		return nil
	}
	imgs, titles := x.strip(s, net, strips)
	if len(imgs) == 0 {
		return nil
	}
	for i := range imgs { // clamp diverged values so the figure stays drawable
		c := make([]float64, len(imgs[i]))
		for j, v := range imgs[i] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				v = 0
			}
			c[j] = v
		}
		imgs[i] = c
	}
	return plot.ImageGrid(filepath.Join(x.Out, "recovery.png"), imgs, data.Height, s.D/data.Height, titles, "recovery by iteration")
}

// strip picks the images of the recovery figure: for sequences, random
// starts and one cycle from their limits; otherwise examples beside their
// noisy or masked copies and the copies' limits.
func (x *Experiment) strip(s *Set, net *nn.Network, strips map[string]*Recovered) (imgs [][]float64, titles []string) {
	if s.Sequential() {
		var r *Recovered
		for _, rc := range x.Recoveries {
			if rc.Kind == Random || rc.Kind == Gaussian {
				r = strips[rc.Name]
			}
		}
		if r == nil {
			return nil, nil
		}
		for _, k := range StripStarts(s, r.Limits, 2) {
			imgs = append(imgs, r.Starts[k*s.D:(k+1)*s.D])
			titles = append(titles, "start")
			v := r.Limits[k*s.D : (k+1)*s.D]
			for step := 0; step < 9; step++ {
				imgs = append(imgs, v)
				titles = append(titles, fmt.Sprintf("limit+%d", step))
				v = net.Predict(v, 1)
			}
		}
		return imgs, titles
	}
	for _, name := range []string{"noise", "mask"} {
		r, ok := strips[name]
		if !ok {
			continue
		}
		for k := 0; k < 5 && (k+1)*s.D <= len(r.Starts); k++ {
			src := r.Sources[k]
			imgs = append(imgs, s.Example(src), r.Starts[k*s.D:(k+1)*s.D], r.Limits[k*s.D:(k+1)*s.D])
			titles = append(titles, "example "+strconv.Itoa(src+1), name, "limit")
			if len(imgs)+3 > plot.MaxGridImages {
				break
			}
		}
	}
	return imgs, titles
}

// TrainVerify trains (or resumes) the network on the data and verifies
// every example; it returns the result so far, the network and the
// common period of the cycles. An interrupted training is an error that
// names the last checkpoint.
func (x *Experiment) TrainVerify(ctx context.Context, data *Data) (*Result, *nn.Network, int, error) {
	s := data.Set
	period, err := s.Period()
	if err != nil {
		return nil, nil, 0, err
	}
	if x.Out != "" {
		if err := os.MkdirAll(x.Out, 0o755); err != nil {
			return nil, nil, 0, fmt.Errorf("--out %s: %w", x.Out, err)
		}
	}
	b := x.Budget
	b.Checkpoint = x.checkpoint()
	res := &Result{Data: data.Name, Mode: x.Mode, Examples: s.N, Dim: s.D, Labels: data.Labels, Ckpt: b.Checkpoint, Seconds: map[string]float64{}, Recovery: map[string]Summary{}}
	if s.Sequential() {
		res.Cycles = s.Cycles
	}
	x.logf("%d examples of %d values, %d cycle(s), period %d", s.N, s.D, len(s.Cycles), period)
	last := time.Now()
	progress := func(ep int, loss float64) {
		if time.Since(last) >= 10*time.Second {
			last = time.Now()
			x.logf("epoch %d: loss %.3g", ep, loss)
		}
	}
	start := time.Now()
	var tr *nn.Trainer
	var tres nn.TrainResult
	if x.Resume != "" {
		tr, tres, err = Resume(ctx, s, x.Resume, b, progress)
		res.Resumed = x.Resume
	} else {
		tr, tres, err = Train(ctx, s, x.Network, b, progress)
	}
	if err != nil {
		return nil, nil, 0, err
	}
	res.Seconds["training"] = time.Since(start).Seconds()
	res.Network, res.Training = tr.Config(), tres
	res.Loss = tr.Net.Loss(s.X, s.Targets(), s.N)
	if tres.Stop == nn.StopCancelled {
		return nil, nil, 0, fmt.Errorf("training interrupted at epoch %d; the last checkpoint is %s (continue with --resume)", tres.Epochs, b.Checkpoint)
	}
	x.logf("training: %s after %d epochs (%.0f s), loss %.3g; checkpoint %s", tres.Stop, tres.Epochs, tres.Seconds, res.Loss, b.Checkpoint)
	if b.LossTarget > 0 && !tres.Reached {
		msg := fmt.Sprintf("loss target %g not reached: loss %.3g after %d epochs (%s); the checkpoint %s continues it (--resume)", b.LossTarget, res.Loss, tres.Epochs, tres.Stop, b.Checkpoint)
		if x.RequireTarget {
			return nil, nil, 0, fmt.Errorf("%s", msg)
		}
		x.logf("warning: %s", msg)
	}
	mt := x.MatchTol
	if mt == 0 {
		mt = MatchTol(s)
	}
	res.MatchTol = mt
	start = time.Now()
	res.Verified, err = Verify(ctx, tr.Net, s, VerifyOptions{Power: PowerOptions{Iterations: x.PowerIters, Seed: x.Seed}, Tol: mt, Dense: x.Dense, Arnoldi: x.Arnoldi})
	if err != nil {
		return nil, nil, 0, err
	}
	res.Seconds["verification"] = time.Since(start).Seconds()
	res.Stored, res.CyclesOK = CountStored(s, res.Verified)
	x.logf("verified: %d of %d examples stored (fixed-point error ≤ %.3g, top eigenvalue < 1); %d of %d cycles stable", res.Stored, s.N, mt, res.CyclesOK, len(s.Cycles))
	return res, tr.Net, period, nil
}

// Cell is one (width, depth) cell of a Sweep in one mode.
type Cell struct {
	Mode     string         `json:"mode"`
	Width    int            `json:"width"`
	Depth    int            `json:"depth"`
	Training nn.TrainResult `json:"training"`
	Loss     float64        `json:"final_loss"`
	Stored   int            `json:"stored"`
	CyclesOK int            `json:"stable_cycles"`
	Seconds  float64        `json:"seconds"`
}

// SweepModes are the modes of a Sweep, in its order.
var SweepModes = []string{"autoencode", "sequence"}

// Sweep trains and verifies a network of every width × depth in both
// modes (SweepModes) on the examples load gives for each mode; x.Network
// is the template (its Widths are replaced). It writes table.json after
// every cell and the heatmaps table-MODE.png (stored examples per cell;
// a cell that missed the loss target is blank) into x.Out, and checkpoints
// MODE-wW-dD.ckpt there. n is the number of examples, for the heatmaps.
func (x *Experiment) Sweep(ctx context.Context, widths, depths []int, n int, load func(mode string) (*Data, error)) ([]Cell, error) {
	if err := os.MkdirAll(x.Out, 0o755); err != nil {
		return nil, fmt.Errorf("--out %s: %w", x.Out, err)
	}
	var cells []Cell
	values := map[string][][]float64{}
	for _, mode := range SweepModes {
		values[mode] = make([][]float64, len(depths))
		for di := range depths {
			values[mode][di] = make([]float64, len(widths))
		}
	}
	for di, depth := range depths {
		for wi, width := range widths {
			for _, mode := range SweepModes {
				cell, err := x.sweepCell(ctx, mode, width, depth, load)
				if err != nil {
					return nil, err
				}
				cells = append(cells, *cell)
				v := float64(cell.Stored)
				if x.Budget.LossTarget > 0 && !cell.Training.Reached {
					v = math.NaN() // not trained to the common target: not comparable
				}
				values[mode][di][wi] = v
				if err := writeJSONFile(ctx, filepath.Join(x.Out, "table.json"), cells); err != nil {
					return nil, err
				}
			}
		}
	}
	rowL, colL := make([]string, len(depths)), make([]string, len(widths))
	for i, d := range depths {
		rowL[i] = strconv.Itoa(d)
	}
	for i, w := range widths {
		colL[i] = strconv.Itoa(w)
	}
	for _, mode := range SweepModes {
		title := fmt.Sprintf("%s: examples stored (of %d; - = loss target not reached)", mode, n)
		if err := Heatmap(ctx, filepath.Join(x.Out, "table-"+mode+".png"), title, "depth", "width", rowL, colL, values[mode], float64(max(n, 1))); err != nil {
			return nil, err
		}
	}
	return cells, nil
}

// sweepCell trains and verifies the network of one cell of the width ×
// depth table in one mode.
func (x *Experiment) sweepCell(ctx context.Context, mode string, width, depth int, load func(mode string) (*Data, error)) (*Cell, error) {
	c := *x
	c.Mode, c.Out = mode, ""
	c.Budget.Checkpoint = filepath.Join(x.Out, fmt.Sprintf("%s-w%d-d%d.ckpt", mode, width, depth))
	c.Network.Widths = nil
	for range depth {
		c.Network.Widths = append(c.Network.Widths, width)
	}
	if err := c.Network.Validate(); err != nil {
		return nil, err
	}
	data, err := load(mode)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	x.logf("cell width %d depth %d, %s", width, depth, mode)
	res, _, _, err := c.TrainVerify(ctx, data)
	if err != nil {
		return nil, err
	}
	return &Cell{Mode: mode, Width: width, Depth: depth, Training: res.Training, Loss: res.Loss, Stored: res.Stored, CyclesOK: res.CyclesOK, Seconds: time.Since(start).Seconds()}, nil
}

// MNISTClasses is the digit classes of MNIST examples: rows classes in
// turn to autoencode (one list), or for sequences one list per sequence
// from the comma-separated digit patterns (repeated to count sequences;
// 0: one per pattern).
func MNISTClasses(sequential bool, rows int, patterns string, count int) ([][]int, error) {
	if !sequential {
		if rows < 1 {
			return nil, fmt.Errorf("--rows %d: at least 1", rows)
		}
		var c []int
		for k := 0; k < rows; k++ {
			c = append(c, k%mnist.NumClasses)
		}
		return [][]int{c}, nil
	}
	pats := strings.Split(patterns, ",")
	if count == 0 {
		count = len(pats)
	}
	if count < 1 {
		return nil, fmt.Errorf("--sequences %d: at least 1", count)
	}
	var classes [][]int
	for s := 0; s < count; s++ {
		pat := strings.TrimSpace(pats[s%len(pats)])
		if pat == "" {
			return nil, fmt.Errorf("--digits %q: an empty pattern", patterns)
		}
		var cyc []int
		for _, ch := range pat {
			if ch < '0' || ch > '9' {
				return nil, fmt.Errorf("--digits %q: %q is not a digit", patterns, ch)
			}
			cyc = append(cyc, int(ch-'0'))
		}
		classes = append(classes, cyc)
	}
	return classes, nil
}
