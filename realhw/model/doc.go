// Package model is the simulator's side of the realhw.Backend interface:
// each stage's duration from the data-path model's closed forms (hw's link,
// host CPU and copy models, the GPU compute tables), for one request alone
// on an otherwise idle server at the configured background load. A pipeline
// written against realhw.Backend runs on this backend or on a real one, and
// the two are compared stage by stage.
package model
