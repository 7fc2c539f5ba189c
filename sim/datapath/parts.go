package datapath

import (
	"errors"
	"fmt"

	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/hw/units"
)

// PartOverride is a key set to a value other than the one its part gives:
// a scenario that names xeon-8380-2s but sets cores: 64 simulates 64 cores
// and says so in summary.json.
type PartOverride struct {
	Key       string `json:"key"`        // "datapath.host.cores"
	Part      string `json:"part"`       // "xeon-8380-2s"
	PartValue string `json:"part_value"` // "80"
	Value     string `json:"value"`      // "64"
}

// partParam is one key whose default is a parameter of the part named at
// another key (host.cores from host.cpu). The hw catalog is the one table
// of part parameters; this list only says which key reads which of them.
type partParam struct {
	key, partKey string
	// resolve takes the part's value when set(key) is false, and
	// otherwise returns the override (nil when equal to the part's) and an
	// error when the value contradicts the part (more than it has).
	resolve func(c *Config, set bool) (*PartOverride, error)
	// partValue is the part's name and its value for the key, printed.
	partValue func(c *Config) (name, value string, ok bool)
}

// param builds a partParam for a field of type T. part returns the part's
// name and value, ok false when the part name is unknown (validation
// reports it). most, when not nil, is the largest value the part allows.
func param[T comparable](key, partKey string, field func(*Config) *T, part func(*Config) (name string, v T, ok bool), exceeds func(v, partV T) bool) partParam {
	pv := func(c *Config) (string, string, bool) {
		name, v, ok := part(c)
		return name, fmt.Sprint(v), ok
	}
	return partParam{key: key, partKey: partKey, partValue: pv, resolve: func(c *Config, set bool) (*PartOverride, error) {
		name, pv, ok := part(c)
		f := field(c)
		if !ok {
			// An unknown part name: Validate lists the known parts. Keys
			// left unset take the default part's value meanwhile, so that
			// the name is the only problem reported.
			if !set {
				def := Defaults()
				*f = *field(&def)
			}
			return nil, nil
		}
		if !set {
			*f = pv
			return nil, nil
		}
		if *f == pv {
			return nil, nil
		}
		if exceeds != nil && exceeds(*f, pv) {
			return nil, &fieldProblem{key: key, msg: fmt.Sprintf("%v is more than %s (datapath.%s) has: %v; choose a larger part or set it at most %v",
				*f, name, partKey, pv, pv)}
		}
		return &PartOverride{Key: "datapath." + key, Part: name, PartValue: fmt.Sprint(pv), Value: fmt.Sprint(*f)}, nil
	}}
}

func hostCPU(c *Config) (hw.HostCPUSpec, bool) {
	s, err := hw.LookupHostCPU(c.Host.CPU)
	return s, err == nil
}

func nic(c *Config) (hw.NICSpec, bool) {
	s, err := hw.LookupNIC(c.Network.NIC)
	return s, err == nil
}

func smartNIC(c *Config) (hw.SmartNICSpec, bool) {
	s, err := hw.LookupSmartNIC(c.SmartNIC.Model)
	return s, err == nil
}

func gpuLink(c *Config) (hw.PCIeSpec, bool) {
	s, err := hw.LookupPCIe(c.Host.GPULink)
	return s, err == nil
}

func more[T ~int | ~float64](v, partV T) bool { return v > partV }

// partParams lists every key that a part sets, in schema order.
var partParams = []partParam{
	param("host.cores", "host.cpu", func(c *Config) *int { return &c.Host.Cores },
		func(c *Config) (string, int, bool) { s, ok := hostCPU(c); return s.Name, s.Cores, ok }, more[int]),
	param("host.clock", "host.cpu", func(c *Config) *units.Frequency { return &c.Host.Clock },
		func(c *Config) (string, units.Frequency, bool) {
			s, ok := hostCPU(c)
			return s.Name, units.Frequency(s.ClockHz), ok
		}, nil),
	param("host.pinned_h2d", "host.gpu_link", func(c *Config) *units.Bandwidth { return &c.Host.PinnedH2D },
		func(c *Config) (string, units.Bandwidth, bool) {
			s, ok := gpuLink(c)
			return s.Name, units.Bandwidth(s.PinnedH2DBytesPerSec), ok
		}, nil),
	param("host.price", "host.cpu", func(c *Config) *units.Money { return &c.Host.Price },
		func(c *Config) (string, units.Money, bool) {
			s, ok := hostCPU(c)
			return s.Name, units.Money(s.PriceUSD), ok
		}, nil),
	param("host.power", "host.cpu", func(c *Config) *units.Power { return &c.Host.Power },
		func(c *Config) (string, units.Power, bool) {
			s, ok := hostCPU(c)
			return s.Name, units.Power(s.PowerW), ok
		}, nil),
	param("network.line_rate", "network.nic", func(c *Config) *units.Bandwidth { return &c.Network.LineRate },
		func(c *Config) (string, units.Bandwidth, bool) {
			s, ok := nic(c)
			return s.Name, units.Bandwidth(s.LineRateBitsPerSec / 8), ok
		}, more[units.Bandwidth]),
	param("network.efficiency", "network.nic", func(c *Config) *units.Fraction { return &c.Network.Efficiency },
		func(c *Config) (string, units.Fraction, bool) {
			s, ok := nic(c)
			return s.Name, units.Fraction(s.Efficiency), ok
		}, nil),
	param("network.latency", "network.nic", func(c *Config) *units.Duration { return &c.Network.Latency },
		func(c *Config) (string, units.Duration, bool) {
			s, ok := nic(c)
			return s.Name, units.Duration(s.OneWayLatency), ok
		}, nil),
	param("network.per_message", "network.nic", func(c *Config) *units.Duration { return &c.Network.PerMessage },
		func(c *Config) (string, units.Duration, bool) {
			s, ok := nic(c)
			return s.Name, units.Duration(s.PerMessage), ok
		}, nil),
	param("smartnic.arm_cores", "smartnic.model", func(c *Config) *int { return &c.SmartNIC.ArmCores },
		func(c *Config) (string, int, bool) { s, ok := smartNIC(c); return s.Name, s.ArmCores, ok }, more[int]),
	param("smartnic.arm_speed", "smartnic.model", func(c *Config) *units.Ratio { return &c.SmartNIC.ArmSpeed },
		func(c *Config) (string, units.Ratio, bool) {
			s, ok := smartNIC(c)
			return s.Name, units.Ratio(s.ArmSpeed), ok
		}, nil),
	param("smartnic.line_rate", "smartnic.model", func(c *Config) *units.Bandwidth { return &c.SmartNIC.LineRate },
		func(c *Config) (string, units.Bandwidth, bool) {
			s, ok := smartNIC(c)
			return s.Name, units.Bandwidth(s.NIC.LineRateBitsPerSec / 8), ok
		}, more[units.Bandwidth]),
	param("smartnic.dma_bandwidth", "smartnic.model", func(c *Config) *units.Bandwidth { return &c.SmartNIC.DMABandwidth },
		func(c *Config) (string, units.Bandwidth, bool) {
			s, ok := smartNIC(c)
			return s.Name, units.Bandwidth(s.DMABytesPerSec), ok
		}, nil),
	param("smartnic.dma_per_op", "smartnic.model", func(c *Config) *units.Duration { return &c.SmartNIC.DMAPerOp },
		func(c *Config) (string, units.Duration, bool) {
			s, ok := smartNIC(c)
			return s.Name, units.Duration(s.DMAPerOp), ok
		}, nil),
	param("smartnic.price", "smartnic.model", func(c *Config) *units.Money { return &c.SmartNIC.Price },
		func(c *Config) (string, units.Money, bool) {
			s, ok := smartNIC(c)
			return s.Name, units.Money(s.PriceUSD), ok
		}, nil),
	param("smartnic.power", "smartnic.model", func(c *Config) *units.Power { return &c.SmartNIC.Power },
		func(c *Config) (string, units.Power, bool) {
			s, ok := smartNIC(c)
			return s.Name, units.Power(s.MaxPowerW), ok
		}, nil),
}

// derivedKey is a key whose default is another key's value (not a part's):
// the one place that says so. ResolveParts copies it where the scenario
// leaves the key unset; a set value is the scenario's, not an override.
type derivedKey struct {
	key, from string
	copy      func(c *Config)
}

// derivedKeys lists every key that defaults to another key.
var derivedKeys = []derivedKey{
	// One pageable rate both ways unless a measurement says otherwise
	// (calibrate --backend cuda fits it from the D2H pair).
	{"host.pageable_d2h_factor", "host.pageable_factor", func(c *Config) { c.Host.PageableD2HFactor = c.Host.PageableFactor }},
}

// DefaultFrom returns the key whose value key takes when a scenario leaves
// it unset ("host.pageable_factor" for "host.pageable_d2h_factor"), and
// false when key has a default of its own. Keys are relative to the
// datapath section.
func DefaultFrom(key string) (string, bool) {
	for _, d := range derivedKeys {
		if d.key == key {
			return d.from, true
		}
	}
	return "", false
}

// PartKey returns the key whose part sets key ("host.cpu" for
// "host.cores"), and false when no part sets it. Keys are relative to the
// datapath section.
func PartKey(key string) (string, bool) {
	for _, p := range partParams {
		if p.key == key {
			return p.partKey, true
		}
	}
	return "", false
}

// PartDefault returns the default part for key and the value it gives
// ("bluefield3", "22GB/s" for "smartnic.dma_bandwidth"), false when no
// part sets key.
func PartDefault(key string) (part, value string, ok bool) {
	def := Defaults()
	for _, p := range partParams {
		if p.key == key {
			return p.partValue(&def)
		}
	}
	return "", "", false
}

// ResolveParts gives every key that a part sets (partParams) the value of
// the part named in c, unless set(key) says the scenario wrote the key; a
// written value that differs is recorded in c.Overrides, and one that
// exceeds what the part has (more cores, a faster port) is an error naming
// both keys. An unknown part name is left to Validate, which lists the
// known parts. Then every key that defaults to another (derivedKeys) and
// is unset takes that key's value.
func (c *Config) ResolveParts(set func(key string) bool) error {
	c.Overrides = nil
	var errs []error
	for _, p := range partParams {
		o, err := p.resolve(c, set(p.key))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if o != nil {
			c.Overrides = append(c.Overrides, *o)
		}
	}
	for _, d := range derivedKeys {
		if !set(d.key) {
			d.copy(c)
		}
	}
	return errors.Join(errs...)
}
