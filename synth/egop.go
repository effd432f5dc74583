package synth

import "fmt"

// EGOP returns the expected gradient outer product E[∇f(x)∇f(x)ᵀ] of the
// task's target f under its input distribution (d×d, row-major), in closed
// form:
//
//   - product, y = x0·x1 with x ~ N(0, I): diag(1, 1, 0, …);
//   - chain, y = Σ_{k<r} x_k x_{(k+1) mod r}: ∂y/∂x_k = x_{k−1} + x_{k+1},
//     so 2 on the first r diagonal entries and 1 between coordinates two
//     apart around the chain (eigenvalues 4, 2.618, 2.618, 0.382, 0.382
//     for r = 5);
//   - single-index, y = He2(t) + He4(t) with t = uᵀx: ∇y = (4t³ − 10t)u and
//     E[(4t³ − 10t)²] = 100, so 100·uuᵀ;
//   - linear, y = βᵀx: ββᵀ.
//
// The low-rank task has none: its target jumps at x5 = 0, where the
// gradient is a Dirac delta.
func EGOP(task Task, d int, seed uint64) ([]float64, error) {
	need := map[Task]int{Product: 2, Chain: defaultChain, SingleIndex: 1, Linear: 1}
	min, ok := need[task]
	if !ok {
		if task == LowRank {
			return nil, fmt.Errorf("synth: the %s task has no EGOP: its target jumps at x5 = 0", task)
		}
		return nil, fmt.Errorf("synth: unknown task %q", task)
	}
	if d < min {
		return nil, fmt.Errorf("synth: task %s needs d ≥ %d", task, min)
	}
	g := make([]float64, d*d)
	switch task {
	case Product:
		g[0], g[d+1] = 1, 1
	case Chain:
		r := defaultChain
		for k := 0; k < r; k++ {
			g[k*d+k] = 2
			for _, j := range []int{(k + 2) % r, (k + r - 2) % r} {
				g[k*d+j]++
			}
		}
	case SingleIndex, Linear:
		u := direction(task, d, seed)
		c := 1.0
		if task == SingleIndex {
			c = 100
		}
		for i := range u {
			for j := range u {
				g[i*d+j] = c * u[i] * u[j]
			}
		}
	}
	return g, nil
}
