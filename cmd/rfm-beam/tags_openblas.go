//go:build openblas

package main

// buildTags are the build tags of this binary (tests build rfm with them,
// so that both use the same linear algebra).
const buildTags = "openblas"
