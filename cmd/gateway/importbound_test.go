package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestGatewayProcess is the gateway itself when GATEWAY_TEST_ARGS is set:
// tests run it as a child process (the test binary, re-executed) to
// measure a command's peak memory or send it a signal.
func TestGatewayProcess(t *testing.T) {
	args := os.Getenv("GATEWAY_TEST_ARGS")
	if args == "" {
		t.Skip("the gateway as a child process of another test")
	}
	os.Args = append([]string{"gateway"}, strings.Split(args, "\x1f")...)
	main()
	os.Exit(0)
}

// gatewayProcess is the command gateway args... in a process of its own.
func gatewayProcess(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestGatewayProcess$")
	cmd.Env = append(os.Environ(), "GATEWAY_TEST_ARGS="+strings.Join(args, "\x1f"))
	return cmd
}

// runBounded runs cmd, failing the test when it does not end within
// limit, and returns its peak resident memory in bytes.
func runBounded(t *testing.T, cmd *exec.Cmd, limit time.Duration) (peak int64, err error) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v did not end within %v", cmd.Args, limit)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no resource usage on this platform")
	}
	return ru.Maxrss * 1024, err // Linux reports kilobytes
}

// operationsDocument is a document just under size bytes: as many
// operations as fit, each taking and answering the first schema of a
// fan-out (every schema refers to the next one eight times).
func operationsDocument(size int) []byte {
	var b bytes.Buffer
	b.WriteString("{\"openapi\":\"3.0.3\",\"info\":{\"title\":\"many\",\"version\":\"1\"},\"components\":{\"schemas\":{")
	for i := range 6 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"S%d":{"type":"object","properties":{`, i)
		for j := range 8 {
			if j > 0 {
				b.WriteString(",")
			}
			if i == 5 {
				fmt.Fprintf(&b, `"p%d":{"type":"string","enum":["a","b","c"],"description":"a leaf value that says a little about itself"}`, j)
			} else {
				fmt.Fprintf(&b, `"p%d":{"$ref":"#/components/schemas/S%d"}`, j, i+1)
			}
		}
		b.WriteString("}}")
	}
	b.WriteString("}},\"paths\":{")
	for i := 0; b.Len() < size-300; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"/t%d/{id}":{"put":{"parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/S0"}}}},"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/S0"}}}}}}}`, i)
	}
	b.WriteString("}}")
	return b.Bytes()
}

// plainGateway builds this command without the race detector, once per
// test run: the race detector's shadow memory multiplies a process's
// resident memory several times, so a memory bound is measured on the
// program users run, not on the instrumented test binary.
var plainGateway = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "gateway-plain")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "gateway")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// plainProcess is gatewayProcess on the plain build.
func plainProcess(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	bin, err := plainGateway()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = os.Environ()
	return cmd
}

// Any document up to 1 MiB imports, or is refused with a reason, within
// 256 MiB of memory; the import runs in a process of its own so its peak
// resident memory is its own. The time limit is a guard against a hang,
// not a measure of speed (the budget is 10 s on an idle machine).
func TestImportOfHostileDocumentsStaysWithinMemory(t *testing.T) {
	dir := t.TempDir()
	many := filepath.Join(dir, "many.json")
	if err := os.WriteFile(many, operationsDocument(1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	hostile := filepath.Join("..", "..", "openapi", "testdata", "hostile")
	for _, tc := range []struct{ name, spec string }{
		{"fan-out-of-ten-kilobytes", filepath.Join(hostile, "fan-out.yaml")},
		{"any-of-explosion", filepath.Join(hostile, "any-of.yaml")},
		{"wide-schemas-and-long-enums", filepath.Join(hostile, "wide.yaml")},
		{"one-mebibyte-of-operations-sharing-a-fan-out", many},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".yaml")
			cmd := plainProcess(t, "import", "openapi", tc.spec, "--upstream", "up", "--include-writes", "--standalone", "-o", out)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			peak, err := runBounded(t, cmd, 2*time.Minute)
			if err != nil {
				t.Fatalf("import = %v\n%.2000s", err, stderr.String())
			}
			t.Logf("peak resident memory %d MiB", peak>>20)
			if peak > 256<<20 {
				t.Errorf("import of %s peaked at %d MiB resident, more than 256 MiB", tc.spec, peak>>20)
			}
			// The catalog it wrote loads, in a process of its own too:
			// loading compiles every schema again. Its memory follows the
			// tools written more than their schemas (3,300 tools from
			// 1 MiB peak near 256 MiB: YAML nodes and compiled schemas),
			// hence the looser bound.
			env := []string{"IDP_JWKS_URL=https://idp.example.com/jwks", "IDP_ISSUER=https://idp.example.com/", "GATEWAY_AUDIENCE=aud", "UP_URL=http://127.0.0.1:1"}
			val := plainProcess(t, "validate", "--catalog", out)
			val.Env = append(val.Env, env...)
			var vout bytes.Buffer
			val.Stdout, val.Stderr = &vout, &vout
			peak, err = runBounded(t, val, 2*time.Minute)
			if err != nil {
				t.Fatalf("validate of the imported catalog = %v\n%.2000s", err, vout.String())
			}
			t.Logf("validate: peak resident memory %d MiB", peak>>20)
			if peak > 512<<20 {
				t.Errorf("loading the imported catalog peaked at %d MiB resident, more than 512 MiB", peak>>20)
			}
		})
	}
}

// SIGTERM and SIGINT stop a long import, or a check reading a large
// document, promptly, with a message and a non-zero exit; an import
// writes nothing.
func TestImportAndCheckStopOnSignal(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "large.json")
	// Enough operations over shared schemas to take many seconds.
	if err := os.WriteFile(spec, operationsDocument(4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.yaml")
	catalogPath := filepath.Join("..", "..", "openapi", "testdata", "petstore30.golden.yaml")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"import", []string{"import", "openapi", spec, "--upstream", "up", "--include-writes", "-o", out}},
		{"check", []string{"check", "--catalog", catalogPath, "--openapi", spec}},
	} {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
			t.Run(tc.name+"-"+sig.String(), func(t *testing.T) {
				cmd := gatewayProcess(tc.args...)
				cmd.Env = append(cmd.Env, "IDP_JWKS_URL=https://idp.example.com/jwks", "IDP_ISSUER=https://idp.example.com/", "GATEWAY_AUDIENCE=aud", "PETS_API_KEY=k")
				var stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stderr, &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				// Signal once the command is under way: the document
				// takes far longer than this to read and import.
				waitForCPU(t, cmd.Process.Pid, 300*time.Millisecond)
				select {
				case err := <-done:
					t.Fatalf("%s ended before the signal: %v\n%s", tc.name, err, stderr.String())
				default:
				}
				cmd.Process.Signal(sig)
				select {
				case err := <-done:
					if err == nil {
						t.Fatalf("%s stopped by %v exited 0", tc.name, sig)
					}
				case <-time.After(10 * time.Second):
					cmd.Process.Kill()
					t.Fatalf("%s did not stop within 10 s of %v", tc.name, sig)
				}
				if !strings.Contains(stderr.String(), "stopped") {
					t.Errorf("output does not say the command stopped:\n%s", stderr.String())
				}
				if _, err := os.Stat(out); err == nil {
					t.Errorf("an interrupted import wrote %s", out)
				}
			})
		}
	}
}

// waitForCPU waits until process pid has used d of processor time, so a
// signal reaches it at work rather than while it starts.
func waitForCPU(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Skipf("no /proc on this platform: %v", err)
		}
		// Fields after the command name, which is in parentheses:
		// utime and stime are the 12th and 13th, in clock ticks
		// (USER_HZ, 100 on Linux).
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		var utime, stime int64
		fmt.Sscan(f[11], &utime)
		fmt.Sscan(f[12], &stime)
		if time.Duration(utime+stime)*10*time.Millisecond >= d {
			return
		}
		time.Sleep(20 * time.Millisecond) // polling the child's progress
	}
	t.Fatalf("process %d did not use %v of processor time within a minute", pid, d)
}

// A document from which no tool can be imported makes the command fail
// with the reason, and writes nothing (a catalog without tools would fail
// validation, far from its cause).
func TestImportOfNoToolFailsWithTheReason(t *testing.T) {
	out := filepath.Join(t.TempDir(), "none.yaml")
	spec := filepath.Join("..", "..", "openapi", "testdata", "no-tools.yaml")
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"import", "openapi", spec, "--upstream", "jobs", "--standalone", "-o", out}, nil, &stdout, &stderr, os.LookupEnv)
	if err != exitError(1) {
		t.Fatalf("import = %v, want exit status 1\n%s", err, stderr.String())
	}
	for _, want := range []string{
		"skipped POST /jobs: write operation",
		"skipped DELETE /jobs/{id}: write operation",
		"no tool imported, nothing written: all 2 operations were skipped (listed above); they are writes: pass --include-writes",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the import wrote %s", out)
	}
}
