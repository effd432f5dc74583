package nn

import (
	"context"
	"testing"
)

// One epoch of two hidden ReLU layers of 1 024 units on 10 000 rows of 784
// inputs and 10 one-hot outputs (the MNIST shape of issue 13; the time
// depends on the shape, not on the pixels), batches of 128, SGD.
func BenchmarkEpochMNISTShape(b *testing.B) {
	const n, d, k = 10000, 784, 10
	x := randRows(n, d, 1)
	y := make([]float64, n*k)
	for i := 0; i < n; i++ {
		y[i*k+i%k] = 1
	}
	cfg := DefaultConfig()
	cfg.Widths, cfg.LR = []int{1024, 1024}, 0.01
	net, err := New(cfg, d, k)
	if err != nil {
		b.Fatal(err)
	}
	tr, _ := NewTrainer(net, cfg)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tr.Epoch(context.Background(), x, y, n); err != nil {
			b.Fatal(err)
		}
	}
}
