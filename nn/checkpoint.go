package nn

import (
	"context"
	"encoding/gob"
	"fmt"
	"io"
	"math/rand/v2"
	"os"

	"github.com/rfmkit/rfm/internal/atomicfile"
)

// checkpointVersion is the format of checkpoint files.
const checkpointVersion = 1

// checkpoint is everything a Trainer needs to continue exactly where it
// stopped: the configuration, the weights, the optimizer's moments, the
// step and epoch counts and the state of the row-order generator.
type checkpoint struct {
	Version     int
	Config      Config
	Net         Network
	M, V        Grads
	Step, Epoch int
	RNG         []byte
}

// SaveCheckpoint writes the trainer's whole state to path atomically (a
// reader never sees a half-written file; a failed write leaves the old
// file in place).
func (t *Trainer) SaveCheckpoint(ctx context.Context, path string) error {
	rng, err := t.src.MarshalBinary()
	if err != nil {
		return fmt.Errorf("nn: checkpoint %s: %w", path, err)
	}
	c := checkpoint{Version: checkpointVersion, Config: t.cfg, Net: *t.Net, M: t.m, V: t.v, Step: t.step, Epoch: t.epoch, RNG: rng}
	if err := atomicfile.Write(ctx, path, func(w io.Writer) error { return gob.NewEncoder(w).Encode(&c) }); err != nil {
		return fmt.Errorf("nn: checkpoint: %w", err)
	}
	return nil
}

// LoadCheckpoint reads a file SaveCheckpoint wrote and returns a trainer
// that continues from it (its network is Trainer.Net).
func LoadCheckpoint(path string) (*Trainer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("nn: checkpoint: %w", err)
	}
	defer f.Close()
	var c checkpoint
	if err := gob.NewDecoder(f).Decode(&c); err != nil {
		return nil, fmt.Errorf("nn: checkpoint %s is not a checkpoint file: %w", path, err)
	}
	if c.Version != checkpointVersion {
		return nil, fmt.Errorf("nn: checkpoint %s has format %d; this build reads %d", path, c.Version, checkpointVersion)
	}
	if err := c.Config.Validate(); err != nil {
		return nil, fmt.Errorf("nn: checkpoint %s: %w", path, err)
	}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("nn: checkpoint %s is damaged: %w", path, err)
	}
	net := c.Net
	t, err := NewTrainer(&net, c.Config)
	if err != nil {
		return nil, err
	}
	if err := t.src.UnmarshalBinary(c.RNG); err != nil {
		return nil, fmt.Errorf("nn: checkpoint %s: generator state: %w", path, err)
	}
	t.rng = rand.New(t.src)
	t.m, t.v, t.step, t.epoch = c.M, c.V, c.Step, c.Epoch
	return t, nil
}

// check verifies that the layers chain and that the moments match them.
func (c *checkpoint) check() error {
	L := len(c.Net.Layers)
	if L != len(c.Config.Widths)+1 {
		return fmt.Errorf("%d layers for %d hidden widths", L, len(c.Config.Widths))
	}
	if len(c.M.W) != L || len(c.V.W) != L || len(c.M.B) != L || len(c.V.B) != L {
		return fmt.Errorf("optimizer moments for %d/%d layers, not %d", len(c.M.W), len(c.V.W), L)
	}
	for l, ly := range c.Net.Layers {
		if l > 0 && ly.In != c.Net.Layers[l-1].Out {
			return fmt.Errorf("layer %d takes %d inputs after %d outputs", l+1, ly.In, c.Net.Layers[l-1].Out)
		}
		if ly.In < 1 || ly.Out < 1 || len(ly.W) != ly.In*ly.Out || len(c.M.W[l]) != len(ly.W) || len(c.V.W[l]) != len(ly.W) {
			return fmt.Errorf("layer %d: %d weights for %d×%d", l+1, len(ly.W), ly.Out, ly.In)
		}
		if len(ly.B) != len(c.M.B[l]) || len(ly.B) != len(c.V.B[l]) || (ly.B != nil && len(ly.B) != ly.Out) {
			return fmt.Errorf("layer %d: %d biases for %d outputs", l+1, len(ly.B), ly.Out)
		}
	}
	return nil
}
