package nn

import (
	"context"
	"testing"
)

func BenchmarkEpochSix512x30(b *testing.B) {
	const n, d = 6, 2
	x := randRows(n, d, 1)
	cfg := Config{Activation: Cosid, Optimizer: Adam, LR: 1e-4, Init: InitPyTorch, Bias: true, Seed: 1}
	cfg.Widths = make([]int, 30)
	for i := range cfg.Widths {
		cfg.Widths[i] = 512
	}
	net, _ := New(cfg, d, d)
	tr, _ := NewTrainer(net, cfg)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr.Epoch(context.Background(), x, x, n)
	}
}
