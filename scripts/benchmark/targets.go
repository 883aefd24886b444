package main

import "fmt"

// target prints one figure of issue #14 against its target: met, or missed
// by how much. Why a figure misses is written up in docs/BENCHMARKS.md.
func target(name string, got, want float64, higherIsBetter bool, unit string) {
	op, met, by := "<=", got <= want, got/want
	if higherIsBetter {
		op, met, by = ">=", got >= want, want/got
	}
	verdict := "met"
	if !met {
		verdict = fmt.Sprintf("MISSED by %.1fx", by)
	}
	fmt.Printf("target: %s: %.2f%s (want %s %g%s): %s\n", name, got, unit, op, want, unit, verdict)
}
