package catalog

import (
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Size
		err  bool
	}{
		{"0", 0, false},
		{"512", 512, false},
		{"512B", 512, false},
		{"64KiB", 64 << 10, false},
		{" 8 MiB ", 8 << 20, false},
		{"1GiB", 1 << 30, false},
		{"10KB", 10_000, false},
		{"5MB", 5_000_000, false},
		{"2GB", 2_000_000_000, false},
		{"1024GiB", 1 << 40, false},
		{"1025GiB", 0, true},
		{"12XB", 0, true},
		{"64kib", 0, true},
		{"1.5MiB", 0, true},
		{"-1KiB", 0, true},
		{"", 0, true},
		{"KiB", 0, true},
		{"9223372036854775807KiB", 0, true},
		{strings.Repeat("1", 40), 0, true},
	} {
		got, err := ParseSize(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v, want %d, error %t", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestSizeStringRoundTrips(t *testing.T) {
	for _, s := range []Size{0, 1, 1023, 1024, 1536, 64 << 10, 8 << 20, 3 << 30, 1 << 40} {
		got, err := ParseSize(s.String())
		if err != nil || got != s {
			t.Errorf("ParseSize(%q) = %d, %v, want %d", s.String(), got, err, s)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"10s", 10 * time.Second, false},
		{"500ms", 500 * time.Millisecond, false},
		{"1m30s", 90 * time.Second, false},
		{"0s", 0, false},
		{"0", 0, false},
		{"10", 0, true},
		{"-1s", 0, true},
		{"", 0, true},
		{"ten seconds", 0, true},
		{"9999999999999h", 0, true},
		{strings.Repeat("1", 40) + "s", 0, true},
	} {
		got, err := ParseDuration(tt.in)
		if (err != nil) != tt.err || got.D() != tt.want {
			t.Errorf("ParseDuration(%q) = %s, %v, want %s, error %t", tt.in, got, err, tt.want, tt.err)
		}
	}
}
