// Package trace provides importers that turn public cluster traces (Alibaba
// PAI v2020, v2023 "openb" and v2025 DLRM, Microsoft Philly, SenseTime
// Helios, and a documented generic CSV) into workloads.Job lists, plus trace
// statistics (Inspect), a synthetic generator with a trace's statistics and
// trace upscaling. FORMATS.md describes every accepted format.
package trace
