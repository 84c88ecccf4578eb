// Package gatewaybin builds the gateway binary once for a package of
// end-to-end tests, so they run the real program as a user would.
package gatewaybin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Main builds ./cmd/gateway from src (its path relative to the test
// package) into a temporary directory, stores the binary's path in *bin,
// runs the tests and exits with their code. A failed build exits 1.
func Main(m *testing.M, src string, bin *string) {
	dir, err := os.MkdirTemp("", "gateway-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = filepath.Join(dir, "gateway")
	build := exec.Command("go", "build", "-o", *bin, src)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the gateway:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
