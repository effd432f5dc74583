// Package workers runs a list of jobs on a fixed number of goroutines, for
// the benchmark runners (packages uci and bench/tabular).
package workers

import (
	"context"
	"sync"
)

// Run hands the items, in order, to n goroutines that call do on each. It
// stops handing out items once ctx is done, waits for the running calls,
// and returns the first error a call returned, else ctx.Err().
func Run[T any](ctx context.Context, items []T, n int, do func(T) error) error {
	ch := make(chan T)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range max(n, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range ch {
				if err := do(it); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		ch <- it
	}
	close(ch)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}
