//go:build !cbc

package optimal

const cbcHint = " (backend \"cbc\" needs a build with -tags cbc and coinor-libcbc-dev installed)"
