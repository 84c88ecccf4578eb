package catalog_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/gateway/catalog"
)

func TestParseTimeOffset(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
	}{
		{"2h", 2 * time.Hour},
		{"90m", 90 * time.Minute},
		{"1d", 24 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{"7d", 7 * 24 * time.Hour},
		{"1.5h", 90 * time.Minute},
		{"366d", catalog.MaxTimeOffset},
		{"1s", time.Second},
	} {
		if got, err := catalog.ParseTimeOffset(tt.in); err != nil || got != tt.want {
			t.Errorf("ParseTimeOffset(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"", `"" is not a duration like 90m, 2h, 1d or 1d12h`},
		{"soon", `"soon" is not a duration`},
		{"0s", "greater than zero"},
		{"0d", "greater than zero"},
		{"-1h", "without a sign"},
		{"+1h", "without a sign"},
		{"1d-1h", `is not a duration`},
		{"367d", "of at most 366d"},
		{"8785h", "of at most 366d"},
		{"366d1s", "of at most 366d"},
		{"99999999999999999999d", "is not a duration"},
		{"1.5d", "is not a duration"},
		{"1 h", "is not a duration"},
		{"2", "is not a duration"},
	} {
		_, err := catalog.ParseTimeOffset(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseTimeOffset(%q) = %v, want an error containing %q", tt.in, err, tt.want)
		}
	}
}

func TestFormatTime(t *testing.T) {
	at := time.Date(2026, 12, 1, 13, 0, 0, 999_000_000, time.FixedZone("CET", 3600))
	if got, want := catalog.FormatTime(at, false), "2026-12-01T12:00:00Z"; got != want {
		t.Errorf("FormatTime(rfc3339) = %q, want %q", got, want)
	}
	if got, want := catalog.FormatTime(at, true), "1796126400"; got != want {
		t.Errorf("FormatTime(unix) = %q, want %q", got, want)
	}
}
