//go:build !unix

package inputfile

const nonBlock = 0
