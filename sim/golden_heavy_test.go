//go:build heavy

package sim_test

// heavyGolden: built with -tags heavy, every seed of every scenario runs.
const heavyGolden = true
