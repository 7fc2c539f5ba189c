package datapath

import (
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/conspirator-sim/conspirator/hw/units"
)

func TestDefaultsValidate(t *testing.T) {
	if err := Defaults().Validate(); err != nil {
		t.Fatalf("defaults do not validate:\n%v", err)
	}
}

// Every field carries yaml and doc tags, and every default tag, parsed as
// YAML the way a scenario file is, equals the value Defaults returns: the
// documentation cannot drift from the code.
func TestDefaultTagsMatchDefaults(t *testing.T) {
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		ty := v.Type()
		for i := 0; i < ty.NumField(); i++ {
			f := ty.Field(i)
			key := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if key == "-" && f.Name == "Overrides" {
				continue // an output of ResolveParts
			}
			if key == "" || key == "-" {
				t.Errorf("%s%s: no yaml key", path, f.Name)
				continue
			}
			if f.Tag.Get("doc") == "" {
				t.Errorf("%s%s: no doc tag", path, key)
			}
			fv := v.Field(i)
			def, ok := f.Tag.Lookup("default")
			if !ok {
				if f.Type.Kind() == reflect.Struct {
					walk(fv, path+key+".")
				} else if _, fromPart := PartKey(strings.TrimPrefix(path+key, "datapath.")); fromPart {
					// Its default is the default part's value:
					// TestResolvePartsGivesDefaults.
				} else if _, derived := DefaultFrom(strings.TrimPrefix(path+key, "datapath.")); derived {
					// Its default is another key's value:
					// TestResolvePartsGivesDefaults.
				} else if ty != reflect.TypeOf(GPUConfig{}) {
					t.Errorf("%s%s: no default tag", path, key)
				}
				continue
			}
			def, err := DefaultText(def, f.Type) // a catalog key's value, as the loader reads it
			if err != nil {
				t.Errorf("%s%s: %v", path, key, err)
				continue
			}
			holder := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "V", Type: f.Type, Tag: `yaml:"v"`}}))
			if err := yaml.Unmarshal([]byte("v: "+def), holder.Interface()); err != nil {
				t.Errorf("%s%s: default tag %q does not parse: %v", path, key, def, err)
				continue
			}
			got := holder.Elem().Field(0).Interface()
			if !reflect.DeepEqual(got, fv.Interface()) {
				t.Errorf("%s%s: default tag %q parses to %v, Defaults() has %v", path, key, def, got, fv.Interface())
			}
		}
	}
	walk(reflect.ValueOf(Defaults()), "datapath.")
}

// Bad input: each case breaks one setting; Validate must name the key and
// say what would be right.
func TestValidateErrors(t *testing.T) {
	cases := []struct {
		name string
		mod  func(c *Config)
		want []string // substrings of the error
	}{
		{"zero bandwidth", func(c *Config) { c.Network.LineRate = 0 }, []string{"datapath.network.line_rate", "above 0"}},
		{"zero DMA bandwidth", func(c *Config) { c.SmartNIC.DMABandwidth = 0 }, []string{"datapath.smartnic.dma_bandwidth", "above 0"}},
		{"negative latency", func(c *Config) { c.Network.Latency = units.Duration(-1000) }, []string{"datapath.network.latency", "negative"}},
		{"buffer below one request", func(c *Config) { c.SmartNIC.BufferBytes = 1 << 20 },
			[]string{"datapath.smartnic.buffer", "cannot hold one request", "use at least 1176KiB"}},
		{"full background load", func(c *Config) { c.Host.BackgroundLoad = 1 }, []string{"datapath.host.background_load", "[0%, 100%)"}},
		{"more clients than QPs", func(c *Config) { c.Clients.Count = 10; c.Network.MaxQPs = 8 }, []string{"datapath.clients.count", "max_qps = 8"}},
		{"gpudirect buffers exceed GPU memory", func(c *Config) {
			c.Clients.Count = 40000
			c.Request.Batch = 16
		}, []string{"datapath.clients.count", "gpudirect", "use at most"}},
		{"unknown path", func(c *Config) { c.Paths = []string{"tcp", "udp"} }, []string{"datapath.paths[1]", `"udp"`, "conspirator"}},
		{"duplicate path", func(c *Config) { c.Paths = []string{"tcp", "tcp"} }, []string{"datapath.paths[1]", "twice"}},
		{"no GPUs", func(c *Config) { c.GPUs = nil }, []string{"datapath.gpus", "at least one"}},
		{"unknown GPU", func(c *Config) { c.GPUs = []GPUConfig{{Type: "a1000", Count: 1}} }, []string{"datapath.gpus[0].type"}},
		{"bad MIG profile", func(c *Config) { c.GPUs = []GPUConfig{{Type: "a100-80gb", Profile: "5g.50gb", Count: 1}} }, []string{"datapath.gpus[0].profile"}},
		{"zero clients", func(c *Config) { c.Clients.Count = 0 }, []string{"datapath.clients.count", "at least 1"}},
		{"open loop without rate", func(c *Config) { c.Clients.Mode = ModeOpen; c.Clients.Rate = 0 }, []string{"datapath.clients.rate"}},
		{"unknown mode", func(c *Config) { c.Clients.Mode = "bursty" }, []string{"datapath.clients.mode", `"closed"`}},
		{"zero batch", func(c *Config) { c.Request.Batch = 0 }, []string{"datapath.request.batch"}},
		{"pageable faster than pinned", func(c *Config) { c.Host.PageableFactor = 1.5 }, []string{"datapath.host.pageable_factor", "at most as fast"}},
		{"pageable D2H faster than pinned", func(c *Config) { c.Host.PageableD2HFactor = 1.5 }, []string{"datapath.host.pageable_d2h_factor", "150%", "at most as fast", "unset to take host.pageable_factor"}},
		{"pageable D2H zero", func(c *Config) { c.Host.PageableD2HFactor = 0 }, []string{"datapath.host.pageable_d2h_factor", "outside (0%, 100%]"}},
		{"unknown copy", func(c *Config) { c.Host.InputCopy = "zero-copy" }, []string{"datapath.host.input_copy"}},
		{"unknown SmartNIC", func(c *Config) { c.SmartNIC.Model = "bluefield4" }, []string{"datapath.smartnic.model", "bluefield3"}},
		{"zero Arm cores", func(c *Config) { c.SmartNIC.ArmCores = 0 }, []string{"datapath.smartnic.arm_cores"}},
		{"unknown buffer policy", func(c *Config) { c.SmartNIC.BufferPolicy = "evict" }, []string{"datapath.smartnic.buffer_policy", `"wait"`}},
		{"warmup eats everything", func(c *Config) { c.WarmupRequests = 4000 }, []string{"datapath.warmup_requests", "no request to measure"}},
		{"absurd interference", func(c *Config) { c.Host.Interference = 1e306 }, []string{"datapath.host.interference", "above 1000%", "5-30%"}},
		{"unknown stack", func(c *Config) { c.Request.Stack = "onnx" }, []string{"datapath.request.stack", `unknown serving stack "onnx"`}},
		{"tensorrt for bert", func(c *Config) { c.Request.Model = "bert" }, []string{"datapath.request.stack", "resnet50 only"}},
		// 1e9 x 4 clients x 4 paths x (16 + 1100) B = 17.9e12 B = 16.2 TiB.
		{"a billion requests recorded", func(c *Config) { c.Clients.Requests = 1_000_000_000 },
			[]string{"datapath.clients.requests", "1.6e+10 requests", "16.2 TiB", "8.0 GiB limit", "record_requests: false"}},
		// 1e9 x 16 x 16 B = 238.4 GiB even without records.
		{"a billion requests unrecorded", func(c *Config) { c.Clients.Requests = 1_000_000_000; c.RecordRequests = false },
			[]string{"datapath.clients.requests", "238.4 GiB", "use fewer requests"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Defaults()
			tc.mod(&c)
			err := c.Validate()
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if _, err := Run(c, 1); err == nil {
				t.Error("Run accepted an invalid configuration")
			}
		})
	}
}

// Validate reports every problem, not only the first.
func TestValidateCollectsAll(t *testing.T) {
	c := Defaults()
	c.Network.LineRate = 0
	c.Host.Cores = 0
	c.SmartNIC.ArmCores = -1
	err := c.Validate()
	if err == nil {
		t.Fatal("accepted")
	}
	if n := len(strings.Split(err.Error(), "\n")); n != 3 {
		t.Errorf("%d problems reported, want 3:\n%v", n, err)
	}
}

// A scenario's datapath section decoded over the defaults: whatever the
// bytes, Validate either refuses them with an error or Run completes, never
// a panic. Runs are kept small (few requests, GPUs and clients).
func FuzzConfigYAML(f *testing.F) {
	f.Add([]byte("clients: {count: 2, requests: 5}"))
	f.Add([]byte("host: {background_load: 80%, background_model: threads}"))
	f.Add([]byte("clients: {mode: open, rate: 1M/s, requests: 20}\nmax_in_flight: 10"))
	f.Add([]byte("smartnic: {buffer: 3MB, buffer_policy: drop}\nclients: {count: 8}"))
	f.Add([]byte("network: {line_rate: 1bps}"))
	f.Add([]byte("host: {input_copy: pinned, pageable_factor: 100%}"))
	f.Add([]byte("request: {compute_time: 1ns, batch: 1}"))
	f.Add([]byte("gpus: [{type: h100-80gb, profile: 1g.10gb, count: 3}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Defaults()
		c.Clients.Requests = 5
		c.WarmupRequests = 0
		if err := yaml.Unmarshal(data, &c); err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		c.Clients.Requests = min(c.Clients.Requests, 5)
		c.Clients.Count = min(c.Clients.Count, 4)
		c.WarmupRequests = 0
		for i := range c.GPUs {
			c.GPUs[i].Count = min(c.GPUs[i].Count, 2)
		}
		if _, err := Run(c, 1); err != nil {
			t.Fatalf("a validated configuration failed to run: %v", err)
		}
	})
}

// The default run (4 clients x 1000 requests x 4 paths, recorded) is
// estimated at 16,000 x (16 + 1100) B by hand, far below the limit, and
// the largest accepted recorded run is about 7.7 M requests.
func TestEstimateMemory(t *testing.T) {
	c := Defaults()
	if got, want := c.EstimateMemory(), 16000.0*1116; got != want {
		t.Errorf("EstimateMemory() = %v, want %v", got, want)
	}
	c.Clients.Count, c.Clients.Requests = 1, MemoryLimit/1116/4
	if err := c.Validate(); err != nil {
		t.Errorf("a run just under the limit is refused: %v", err)
	}
	c.Clients.Requests++
	if err := c.Validate(); err == nil {
		t.Error("a run just over the limit is accepted")
	}
}
