// Package benchmarks measures insightd: Go benchmarks (go test -bench)
// and load programs, with the figures recorded in results/*.md beside the
// command that produced them, the data size and the machine.
package benchmarks
