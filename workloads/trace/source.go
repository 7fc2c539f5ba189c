package trace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Source says where a trace file comes from, for the message about one
// that is missing: the public trace its name (or format) belongs to and
// where to download it, or, for a file of no public trace, how to write
// one. format may be "" (told from the name only).
func Source(path, format string) string {
	if a, ok := aliases[strings.ToLower(format)]; ok {
		format = a
	}
	base := strings.ToLower(filepath.Base(path))
	switch {
	case format == FormatOpenB || format == FormatOpenBNodes || strings.HasPrefix(base, "openb_"):
		return "the Alibaba GPU traces are at https://github.com/alibaba/clusterdata (openb: folder cluster-trace-gpu-v2023/csv)"
	case format == FormatPAI || format == FormatPAIMachines || strings.HasPrefix(base, "pai_"):
		return "the Alibaba PAI trace (alibaba-v2020) is at https://github.com/alibaba/clusterdata (folder cluster-trace-gpu-v2020)"
	case format == FormatDLRM || strings.HasPrefix(base, "disaggregated_dlrm"):
		return "the Alibaba DLRM trace (alibaba-v2025) is at https://github.com/alibaba/clusterdata (folder cluster-trace-gpu-v2025)"
	case format == FormatPhilly || strings.HasPrefix(base, "cluster_job_log"):
		return "the Microsoft Philly trace is at https://github.com/msr-fiddle/philly-traces (cluster_job_log)"
	case format == FormatHelios || strings.HasPrefix(base, "cluster_log"):
		return "the SenseTime Helios traces are at https://github.com/S-Lab-System-Group/HeliosData (cluster_log.csv)"
	}
	return "the public GPU traces are at https://github.com/alibaba/clusterdata (openb: folder cluster-trace-gpu-v2023/csv); " +
		"a trace of your own is a CSV in the generic format (workloads/trace/FORMATS.md)"
}

// Resolved says where a relative path led: " (resolved to ABS from the
// working directory WD)", or "" for an absolute path. A user who sees
// only the relative path cannot tell where the program looked (a
// built-in scenario's ../shared/traces is relative to the working
// directory).
func Resolved(path string) string {
	if filepath.IsAbs(path) {
		return ""
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" (resolved to %s from the working directory %s)", filepath.Join(wd, path), wd)
}

// NotFound is the message for a trace file that is not there: which file
// (the one missing, for a trace of several tables), where the path led
// and where the data comes from. what names it for the user ("trace",
// "cluster.trace"); fix says how to give another path. It returns nil
// when err is not a missing file.
func NotFound(what, path, format string, err error, fix string) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	missing := path
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path != "" {
		missing = pe.Path // a sibling table of a PAI trace, say
	}
	return fmt.Errorf("%s: file %s not found%s; %s; download the file there, or %s", what, missing, Resolved(missing), Source(missing, format), fix)
}
