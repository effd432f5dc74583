package nn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/rfmkit/rfm/internal/linalg"
)

// SELU's constants (Klambauer et al. 2017).
const (
	seluLambda = 1.0507009873554804934193349852946
	seluAlpha  = 1.6732632423543772848170429916717
)

// actMore is σ(z) for the activations added for the memory experiments.
func (n *Network) actMore(z float64) float64 {
	switch n.Activation {
	case Cosid:
		return math.Cos(z) - z
	case SELU:
		if z > 0 {
			return seluLambda * z
		}
		return seluLambda * seluAlpha * math.Expm1(z)
	case SinLin:
		return z + math.Sin(10*z)/5
	case Swish:
		return z / (1 + math.Exp(-z))
	case Power:
		if z < 0 {
			return -math.Pow(-z, n.Power)
		}
		return math.Pow(z, n.Power)
	default: // Linear
		return z
	}
}

// derivMore is σ'(z) for the activations of actMore.
func (n *Network) derivMore(z float64) float64 {
	switch n.Activation {
	case Cosid:
		return -math.Sin(z) - 1
	case SELU:
		if z > 0 {
			return seluLambda
		}
		return seluLambda * seluAlpha * math.Exp(z)
	case SinLin:
		return 1 + 2*math.Cos(10*z)
	case Swish:
		s := 1 / (1 + math.Exp(-z))
		return s + z*s*(1-s)
	case Power:
		return n.Power * math.Pow(math.Abs(z), n.Power-1)
	default:
		return 1
	}
}

// rmspropStep is one RMSprop update: v ← αv + (1−α)g², then with
// momentum μ > 0 m ← μm + g/(√v + ε), w ← w − lr·m, else
// w ← w − lr·g/(√v + ε).
func rmspropStep(w, grad, m, v []float64, lr, alpha, mu, eps float64) {
	parallelRange(len(w), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v[i] = alpha*v[i] + (1-alpha)*grad[i]*grad[i]
			u := grad[i] / (math.Sqrt(v[i]) + eps)
			if mu > 0 {
				m[i] = mu*m[i] + u
				u = m[i]
			}
			w[i] -= lr * u
		}
	})
}

// JVP returns the network's outputs at rows of x (rows × In) and, for
// each row, the Jacobian of the network with respect to its input at that
// row applied to the same row of v (rows × In): out (rows × Out) and jv
// (rows × Out), by forward-mode differentiation (one extra product per
// layer; the Jacobian is never formed). Several tangents at one point are
// several rows holding the same x.
func (n *Network) JVP(x, v []float64, rows int) (out, jv []float64) {
	h := x[:rows*n.In()]
	t := v[:rows*n.In()]
	for l := range n.Layers {
		ly := &n.Layers[l]
		z := make([]float64, rows*ly.Out)
		beta := 0.0
		if ly.B != nil {
			for i := 0; i < rows; i++ {
				copy(z[i*ly.Out:(i+1)*ly.Out], ly.B)
			}
			beta = 1
		}
		linalg.Gemm(false, true, rows, ly.Out, ly.In, 1, h, ly.In, ly.W, ly.In, beta, z, ly.Out)
		dz := make([]float64, rows*ly.Out)
		linalg.Gemm(false, true, rows, ly.Out, ly.In, 1, t, ly.In, ly.W, ly.In, 0, dz, ly.Out)
		if l+1 == len(n.Layers) {
			return z, dz
		}
		for i, zi := range z {
			dz[i] *= n.deriv(zi)
			z[i] = n.act(zi)
		}
		h, t = z, dz
	}
	panic("unreachable")
}

// Loss is the mean squared error of the network on n rows of x against y.
func (n *Network) Loss(x, y []float64, rows int) float64 {
	l, _ := MSE(n.Predict(x, rows), y[:rows*n.Out()])
	return l
}

// Config returns the trainer's configuration (with defaults filled in).
func (t *Trainer) Config() Config { return t.cfg }

// Epochs is the number of complete epochs made so far (by Epoch or Train,
// counted across checkpoints).
func (t *Trainer) Epochs() int { return t.epoch }

// Budget says when Train stops: at the first of its limits reached. Zero
// fields are no limit; at least one of Epochs, Time and LossTarget must be
// set.
type Budget struct {
	Epochs     int           // total epochs of the trainer, counted from its first (a resumed trainer continues the count)
	Time       time.Duration // wall time of this call
	LossTarget float64       // stop once an epoch's mean loss is ≤ this
	// Checkpoint, when not empty, is a file the trainer is saved to
	// (atomically) every CheckpointEvery epochs (0: only at the end) and
	// when Train returns, whatever the reason, cancellation included.
	Checkpoint      string
	CheckpointEvery int
}

// Stop reasons of a TrainResult.
const (
	StopTarget    = "loss target reached"
	StopEpochs    = "epoch budget spent"
	StopTime      = "time budget spent"
	StopCancelled = "cancelled"
	StopDiverged  = "loss not finite"
)

// TrainResult is how a Train call ended.
type TrainResult struct {
	Epochs  int     // the trainer's epoch count at the end
	Loss    float64 // the last epoch's mean batch loss (the current loss when no epoch ran)
	Reached bool    // Loss ≤ the budget's LossTarget
	Stop    string  // one of the Stop constants
	Seconds float64
}

// Train runs epochs on n rows of x (targets y) until the budget is spent
// or the loss target is reached, calling progress (may be nil) after each
// epoch. Reaching a budget is not an error: the result says why training
// stopped. A cancelled context ends training between batches; an epoch
// cut short is not checkpointed (the last checkpoint, taken at an epoch
// boundary, stands), so a run resumed from any checkpoint repeats the
// uninterrupted run exactly.
func (t *Trainer) Train(ctx context.Context, x, y []float64, n int, b Budget, progress func(epoch int, loss float64)) (TrainResult, error) {
	if b.Epochs < 0 || b.Time < 0 || b.LossTarget < 0 || math.IsNaN(b.LossTarget) || b.CheckpointEvery < 0 {
		return TrainResult{}, fmt.Errorf("nn: budget %+v has a negative or NaN limit", b)
	}
	if b.Epochs == 0 && b.Time == 0 && b.LossTarget == 0 {
		return TrainResult{}, errors.New("nn: a training budget needs an epoch count, a time or a loss target")
	}
	start := time.Now()
	res := TrainResult{Loss: math.NaN()}
	save := func() error {
		if b.Checkpoint == "" {
			return nil
		}
		return t.SaveCheckpoint(context.WithoutCancel(ctx), b.Checkpoint)
	}
	for {
		if b.Epochs > 0 && t.epoch >= b.Epochs {
			res.Stop = StopEpochs
			break
		}
		if b.Time > 0 && time.Since(start) >= b.Time {
			res.Stop = StopTime
			break
		}
		if ctx.Err() != nil {
			res.Stop = StopCancelled
			break
		}
		loss, err := t.Epoch(ctx, x, y, n)
		if err != nil {
			if ctx.Err() != nil {
				// Not saved: the interrupted epoch's updates would make a
				// resumed run differ from an uninterrupted one; the last
				// periodic checkpoint stands.
				res.Stop, res.Epochs, res.Seconds = StopCancelled, t.epoch, time.Since(start).Seconds()
				return res, nil
			}
			return res, err
		}
		res.Loss = loss
		if progress != nil {
			progress(t.epoch, loss)
		}
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			res.Stop = StopDiverged
			break
		}
		if b.LossTarget > 0 && loss <= b.LossTarget {
			res.Stop, res.Reached = StopTarget, true
			break
		}
		if b.Checkpoint != "" && b.CheckpointEvery > 0 && t.epoch%b.CheckpointEvery == 0 {
			if err := save(); err != nil {
				return res, err
			}
		}
	}
	res.Epochs, res.Seconds = t.epoch, time.Since(start).Seconds()
	if math.IsNaN(res.Loss) && res.Stop != StopDiverged { // no epoch ran: the loss as it stands
		res.Loss = t.Net.Loss(x, y, n)
		res.Reached = b.LossTarget > 0 && res.Loss <= b.LossTarget
	}
	if err := save(); err != nil {
		return res, err
	}
	return res, nil
}

// parallelRange runs body over [0, n) in GOMAXPROCS contiguous pieces
// when n is large enough to pay for the goroutines (element-wise updates
// of a big layer), else in one piece. Each element is computed by the
// same arithmetic either way.
func parallelRange(n int, body func(lo, hi int)) {
	const minPiece = 1 << 15
	p := min(runtime.GOMAXPROCS(0), n/minPiece)
	if p < 2 {
		body(0, n)
		return
	}
	var wg sync.WaitGroup
	for k := 0; k < p; k++ {
		lo, hi := k*n/p, (k+1)*n/p
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(lo, hi)
		}()
	}
	wg.Wait()
}
