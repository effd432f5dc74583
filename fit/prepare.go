package fit

import "github.com/rfmkit/rfm"

// Prepare resolves cfg's solver for a fit of the given shape (SolverAuto
// as rfm.ChooseSolver decides) and, for an RFM, checks the whole fit's
// memory against cfg.MemoryLimit before any row is encoded (a tree plans
// its leaves itself). It returns the configuration to fit, its solver
// set, and why that solver.
func Prepare(cfg rfm.Config, shape rfm.FitShape) (rfm.Config, string, error) {
	solver, why := rfm.ChooseSolver(cfg, shape)
	cfg.Solver = solver
	if solver != rfm.SolverTree {
		if err := rfm.PlanFit(shape, cfg).Check(cfg.MemoryLimit); err != nil {
			return cfg, why, err
		}
	}
	return cfg, why, nil
}
