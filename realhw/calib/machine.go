package calib

import (
	"bufio"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/hw/units"
)

// CollectMachine describes this machine for a profile's provenance: the
// hostname, the CPU model and clock from /proc/cpuinfo (when it says),
// GOARCH and the core count. It also returns the clock in Hz (0 when
// unknown), used to turn CPU time per byte into cycles per byte.
func CollectMachine() (Machine, float64) {
	m := Machine{GOARCH: runtime.GOARCH, Cores: runtime.NumCPU()}
	m.Hostname, _ = os.Hostname()
	var hz float64
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		m.CPUModel, hz = parseCPUInfo(f)
	}
	if hz > 0 {
		m.Clock = units.Frequency(round(hz, 4)).String()
	}
	return m, hz
}

// parseCPUInfo returns the first "model name" (x86; "Hardware" or the
// implementer/part pair on Arm) and the first "cpu MHz" in Hz.
func parseCPUInfo(r io.Reader) (model string, hz float64) {
	var impl, part string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name", "Hardware":
			if model == "" {
				model = v
			}
		case "CPU implementer":
			impl = v
		case "CPU part":
			part = v
		case "cpu MHz":
			if mhz, err := strconv.ParseFloat(v, 64); err == nil && hz == 0 && mhz > 0 {
				hz = mhz * 1e6
			}
		}
	}
	if model == "" && impl != "" {
		model = "Arm implementer " + impl + " part " + part
	}
	return model, hz
}

// SetClock fills in cycles per byte for every CPU fit from the clock in Hz.
func (p *Profile) SetClock(hz float64) {
	if hz <= 0 {
		return
	}
	p.Provenance.Machine.Clock = units.Frequency(round(hz, 4)).String()
	for i := range p.CPU {
		p.CPU[i].CyclesPerByte = round(p.CPU[i].NsPerByte*hz/1e9, 4)
	}
}
