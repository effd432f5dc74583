package main

import (
	"errors"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/describe"
	"github.com/rfmkit/rfm/predictor"
)

func cmdInspect(e *env, args []string) error {
	var (
		model      string
		top, eig   int
		plots      string
		imageShape string
		common     commonFlags
	)
	f := helpFlagSet("inspect", "rfm inspect --model FILE [flags]")
	f.positional = "model"
	f.String(&model, "model", "", "model `FILE` written by 'rfm fit'")
	f.Int(&top, "top-features", 20, "show the `K` features with the largest diag(M) (0 = all)")
	f.Int(&eig, "top-eigen", 10, "show the `K` largest eigenvalues of M (0 = all)")
	f.Section("Figures")
	f.String(&plots, "plots", "", "write PNG figures into `DIR`: diag(M) bars, eigenvalue spectrum, top eigenvectors, validation curve")
	f.String(&imageShape, "image-shape", "", "with --plots, also draw diag(M) and the top eigenvectors as `HxW[xC]` images (inputs are pixels)")
	f.Section("Output")
	f.Bool(&common.json, "json", false, "print the result as JSON on stdout")
	if err := f.ParsePositional(args, e.stdout, &model); err != nil {
		return err
	}
	var shape *imageDims
	if imageShape != "" {
		if plots == "" {
			return usagef("--image-shape needs --plots DIR")
		}
		sh, err := parseImageShape(imageShape)
		if err != nil {
			return err
		}
		shape = sh
	}
	if top < 0 {
		return usagef("--top-features %d: must be ≥ 0 (0 = all)", top)
	}
	if eig < 0 {
		return usagef("--top-eigen %d: must be ≥ 0 (0 = all)", eig)
	}
	lm, err := loadModel(model, false)
	if err != nil {
		return err
	}
	// Each model kind describes itself (describe.RegisterInspector).
	res, err := describe.Inspect(lm, describe.InspectOptions{Top: top, Eigen: eig, Plots: plots, ImageShape: shape,
		Figures: func(m *predictor.Model) ([]string, error) {
			return writeFigures(plots, m, describe.FeatureNames(m), top, shape)
		}})
	var oe *describe.OptionError
	if errors.As(err, &oe) {
		return usagef("%s", oe.Msg)
	}
	if err != nil {
		return err
	}
	return printReport(e, common, res)
}

// rfmModel is the RFM of a model file that holds one (the figures'
// subject).
func rfmModel(lm *loadedModel) *rfm.Model { return lm.Fitted.(rfm.KernelMachine).KernelMachine() }
