// Package inpaint is the benchmark of 'rfm bench inpaint': every PNG of a
// folder, three masking tasks (large holes; 50% and 80% of the pixels
// missing at random, seeded), the CNTK against a Laplace kernel on pixel
// coordinates on the same mask, and, read back from a CSV, a reference
// method (scikit-image's biharmonic inpainting, run by a script).
//
// Each run is a child 'rfm inpaint' of an rfm binary (Options.Exe), so that
// its time and peak memory are its own; its image, mask and report go to
// Options.Work, and a rerun reuses the runs whose report is there. Bench
// scores every result (PSNR over the image and over the missing pixels,
// SSIM) and writes runs.csv, summary.md and a grid of images per task.
//
// It is a benchmark harness: it measures the command-line tool as a user
// runs it; to inpaint from Go, see package cntk.
package inpaint
