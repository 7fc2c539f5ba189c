// Package builtin provides nothing but its imports: importing it registers
// every GPU scheduling policy of the project (exclusive, naive-share,
// first-fit, best-fit, fgd, conspirator, optimal) with policies/snapshot.
package builtin

import (
	_ "github.com/conspirator-sim/conspirator/policies/conspirator"
	_ "github.com/conspirator-sim/conspirator/policies/exclusive"
	_ "github.com/conspirator-sim/conspirator/policies/fgd"
	_ "github.com/conspirator-sim/conspirator/policies/fit"
	_ "github.com/conspirator-sim/conspirator/policies/naiveshare"
	_ "github.com/conspirator-sim/conspirator/policies/optimal"
)
