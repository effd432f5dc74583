package workers

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestRunDoesEveryItemAndReturnsTheFirstError(t *testing.T) {
	var sum atomic.Int64
	items := []int{1, 2, 3, 4, 5, 6, 7}
	if err := Run(context.Background(), items, 3, func(v int) error { sum.Add(int64(v)); return nil }); err != nil {
		t.Fatal(err)
	}
	if sum.Load() != 28 {
		t.Fatalf("sum %d, want 28: an item was skipped or done twice", sum.Load())
	}
	bad := errors.New("bad")
	err := Run(context.Background(), items, 1, func(v int) error {
		if v == 4 {
			return bad
		}
		return nil
	})
	if !errors.Is(err, bad) {
		t.Fatalf("got %v, want the item's error", err)
	}
}

func TestRunStopsHandingOutItemsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var done atomic.Int64
	err := Run(ctx, []int{1, 2, 3, 4, 5}, 1, func(v int) error {
		done.Add(1)
		if v == 2 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || done.Load() > 3 {
		t.Fatalf("err %v after %d items; want context.Canceled after at most 3", err, done.Load())
	}
}
