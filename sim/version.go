package sim

// Version is written into every summary.json. It is a constant, not a build
// stamp, so that outputs stay byte-identical across builds of one release.
const Version = "0.1.0-dev"
