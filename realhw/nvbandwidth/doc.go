// Package nvbandwidth parses the text output of NVIDIA's nvbandwidth tool
// (testcase banners, bandwidth matrices in GB/s, SUM lines) into typed
// matrices and realhw samples.
package nvbandwidth
