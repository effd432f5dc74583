// Package describe words fits, models, trees and cross-validations for
// people: the one-line descriptions of a target and a configuration, the
// per-round table, the summary of a tree of RFMs and of a k-fold
// cross-validation, in text and as the JSON-ready structs that 'rfm fit',
// 'rfm cv' and 'rfm inspect' print. A Go program that fits models can
// print the same reports.
package describe
