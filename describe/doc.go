// Package describe words fits, models, trees and cross-validations for
// people: the one-line descriptions of a target and a configuration, the
// per-round table, the summary of a tree of RFMs and of a k-fold
// cross-validation, in text and as the JSON-ready structs that 'rfm fit',
// 'rfm cv' and 'rfm inspect' print. A Go program that fits models can
// print the same reports.
//
// Each model kind describes itself: Inspect looks the kind of a model file
// up in a registry (RegisterInspector, keyed by rfm.Fitted.Kind as
// modelfile.RegisterKind keys decoders) and returns an Inspection that
// prints as JSON and writes itself as text, so that adding a model kind
// adds an inspector and edits no switch. ReportFit is the report of a fit
// of any kind (fit.Fit's result): an RFM's rounds or a tree's leaves.
package describe
