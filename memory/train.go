package memory

import (
	"context"
	"fmt"

	"github.com/rfmkit/rfm/nn"
)

// Train draws a network with cfg (D inputs, D outputs) and trains it on
// the set's examples against their targets until the budget is spent or
// the loss target reached (see nn.Trainer.Train).
func Train(ctx context.Context, s *Set, cfg nn.Config, b nn.Budget, progress func(epoch int, loss float64)) (*nn.Trainer, nn.TrainResult, error) {
	net, err := nn.New(cfg, s.D, s.D)
	if err != nil {
		return nil, nn.TrainResult{}, err
	}
	tr, err := nn.NewTrainer(net, cfg)
	if err != nil {
		return nil, nn.TrainResult{}, err
	}
	res, err := tr.Train(ctx, s.X, s.Targets(), s.N, b, progress)
	return tr, res, err
}

// Resume loads a checkpoint and continues training it on the set (whose
// dimension must match the checkpoint's network) until the budget.
func Resume(ctx context.Context, s *Set, checkpoint string, b nn.Budget, progress func(epoch int, loss float64)) (*nn.Trainer, nn.TrainResult, error) {
	tr, err := nn.LoadCheckpoint(checkpoint)
	if err != nil {
		return nil, nn.TrainResult{}, err
	}
	if tr.Net.In() != s.D || tr.Net.Out() != s.D {
		return nil, nn.TrainResult{}, fmt.Errorf("memory: checkpoint %s maps %d values to %d; the examples have %d", checkpoint, tr.Net.In(), tr.Net.Out(), s.D)
	}
	res, err := tr.Train(ctx, s.X, s.Targets(), s.N, b, progress)
	return tr, res, err
}

// Apply returns f^p at rows of x (p applications of the network).
func Apply(net *nn.Network, x []float64, rows, p int) []float64 {
	for k := 0; k < p; k++ {
		x = net.Predict(x, rows)
	}
	return x
}
