package datapath

import "github.com/conspirator-sim/conspirator/engine"

// horizonShare is the share of the simulator's horizon (engine.Horizon)
// a run's expected issue window may take: each client's requests times
// its mean gap (think time, or 1/rate), drawn from an exponential, must
// end within a tenth of it, so that the draws' spread and the service
// times stay far inside. A run that still crosses it stops with an
// *engine.HorizonError (exit 2, no result).
const horizonShare = 0.1

// checkHorizon refuses clients whose expected issue window passes
// horizonShare of the horizon, at the key that sets the gap.
func (c ClientsConfig) checkHorizon(p *problems) {
	if c.Requests < 1 {
		return
	}
	limit := horizonShare * engine.HorizonSeconds
	switch c.Mode {
	case ModeClosed:
		if c.ThinkTime <= 0 {
			return
		}
		if w := float64(c.Requests) * c.ThinkTime.Time().Seconds(); w > limit {
			p.addf("clients.think_time", "%v x %d requests per client is %.4g s, past a tenth of the simulator's horizon of %s (%.4g s); use at most %.4g s",
				c.ThinkTime, c.Requests, w, engine.HorizonText, engine.HorizonSeconds, limit/float64(c.Requests))
		}
	case ModeOpen:
		if !(c.Rate > 0) {
			return
		}
		if w := float64(c.Requests) / float64(c.Rate); w > limit {
			p.addf("clients.rate", "%g/s: %d requests per client take %.4g s, past a tenth of the simulator's horizon of %s (%.4g s); use at least %.4g/s",
				float64(c.Rate), c.Requests, w, engine.HorizonText, engine.HorizonSeconds, float64(c.Requests)/limit)
		}
	}
}
