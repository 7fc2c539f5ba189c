package reports

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// HTMLFile is the self-contained report page written beside report.md.
const HTMLFile = "report.html"

// imgSrc matches the image references goldmark writes for report.md's
// figures (relative paths under plots/).
var imgSrc = regexp.MustCompile(`src="(` + PlotsDir + `/[^"]+)"`)

// writeHTML writes report.html: report.md as HTML (tables and all), each
// figure inlined as a data: URI so that the one file can be mailed or
// attached to a paper's artefact, and a provenance line (version,
// scenario, seed, calibration profile) at the top. The bytes depend on
// md and the figure files only.
func writeHTML(fsys atomicfs.FS, dir, md string, r Result) error {
	return writeHTMLWith(fsys, dir, md, r.Scenario, provenance(r))
}

// writeHTMLWith is writeHTML with the page's title and provenance line
// given (a sweep's: the builds, scenario and seeds of its points).
func writeHTMLWith(fsys atomicfs.FS, dir, md, title, prov string) error {
	var body bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.Table)).Convert([]byte(md), &body); err != nil {
		return fmt.Errorf("report: %s: %w", HTMLFile, err)
	}
	var ferr error
	page := imgSrc.ReplaceAllFunc(body.Bytes(), func(m []byte) []byte {
		rel := string(imgSrc.FindSubmatch(m)[1])
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			ferr = err
			return m
		}
		mime := "image/png"
		if strings.HasSuffix(rel, ".svg") {
			mime = "image/svg+xml"
		}
		return []byte(`src="data:` + mime + `;base64,` + base64.StdEncoding.EncodeToString(b) + `"`)
	})
	if ferr != nil {
		return fmt.Errorf("report: %s: %w", HTMLFile, ferr)
	}
	page = scrollTables(page)
	if title == "" {
		title = filepath.Base(filepath.Clean(dir))
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n", html.EscapeString(title))
	out.WriteString("<style>body{font-family:sans-serif;max-width:72em;margin:2em auto;padding:0 1em}" +
		"table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}" +
		"td:first-child,th:first-child{text-align:left}img{max-width:100%}.prov{color:#555}" +
		".table{overflow-x:auto;max-width:100%;margin:1em 0}.table table{margin:0}td{white-space:nowrap}</style>\n</head>\n<body>\n")
	fmt.Fprintf(&out, "<p class=\"prov\">%s</p>\n", html.EscapeString(prov))
	out.Write(page)
	out.WriteString("</body>\n</html>\n")
	if err := atomicfs.WriteFile(fsys, filepath.Join(dir, HTMLFile), out.Bytes()); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// scrollTables puts every table of page in a box of the page's width
// that scrolls sideways: a table wider than the page (a cluster run's 14
// columns) scrolls inside its own box instead of running past the page's
// edge and widening the whole page.
func scrollTables(page []byte) []byte {
	page = bytes.ReplaceAll(page, []byte("<table>"), []byte(`<div class="table"><table>`))
	return bytes.ReplaceAll(page, []byte("</table>"), []byte("</table></div>"))
}

// provenance says what a result rests on: the simulator's version and
// commit (where the binary was stamped), the scenario, the seed (the
// seeds, where its means are over several) and the calibration profile
// (none: catalog values).
func provenance(r Result) string {
	parts := []string{Build(r.Version, r.Commit)}
	parts = append(parts, "scenario "+orUnknown(r.Scenario))
	if r.Seed != nil {
		parts = append(parts, SeedsText(uint64(*r.Seed), r.seedCount()))
	} else {
		parts = append(parts, "seed unknown")
	}
	if c := r.calibration(); c != "" {
		parts = append(parts, "calibration profile "+c)
	} else {
		parts = append(parts, "no calibration profile (catalog values)")
	}
	return strings.Join(parts, ", ")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
