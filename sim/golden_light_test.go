//go:build !heavy

package sim_test

// heavyGolden: without -tags heavy, many-seed cluster scenarios run their
// first seeds only (see TestBuiltinScenariosGolden).
const heavyGolden = false
