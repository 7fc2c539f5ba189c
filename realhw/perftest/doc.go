// Package perftest parses the text output of the linux-rdma perftest tools
// (ib_write_bw, ib_read_bw, ib_write_lat, ib_read_lat, ib_send_lat) into
// typed rows and realhw samples, taking units from the table header and the
// half- or full-round-trip semantics from the tool.
package perftest
