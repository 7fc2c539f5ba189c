package sim

import "runtime/debug"

// Version is written into every summary.json. It is a constant, not a build
// stamp, so that outputs stay byte-identical across builds of one release.
const Version = "0.1.0-dev"

// Commit is the VCS revision the running binary was built from, first 12
// hex digits, with "+modified" when the checkout had uncommitted changes;
// "" when the go command did not stamp it (go test binaries, builds with
// -buildvcs=false or outside a checkout). summary.json carries it beside
// Version, so a result names the code that made it; two builds of one
// commit still write identical bytes.
func Commit() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && modified {
		rev += "+modified"
	}
	return rev
}
