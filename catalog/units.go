package catalog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Size is a byte count written as an integer or with a unit: 512, 64KiB,
// 8MiB, 1GiB (binary) or 10KB, 5MB (decimal).
type Size int64

// String writes s in the largest binary unit that divides it exactly
// ("8MiB", "1536B"), a form [ParseSize] reads back.
func (s Size) String() string {
	for _, u := range []struct {
		suffix string
		mult   Size
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if s != 0 && s%u.mult == 0 {
			return strconv.FormatInt(int64(s/u.mult), 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(s), 10) + "B"
}

// Duration is a time.Duration written as Go writes it: 500ms, 10s, 1m30s.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// maxUnitText caps what the parsers read, so a hostile value costs nothing.
const maxUnitText = 32

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
	{"B", 1},
}

// ParseSize parses a size such as "64KiB". Negative sizes and sizes over
// 1 TiB are refused.
func ParseSize(s string) (Size, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty size")
	}
	if len(s) > maxUnitText {
		return 0, fmt.Errorf("size %.32q… is too long", s)
	}
	num, mult := s, int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want a whole number of bytes, optionally with a unit (KiB, MiB, GiB, KB, MB, GB)", s)
	}
	const max = int64(1) << 40
	if n > max/mult {
		return 0, fmt.Errorf("size %q is over the 1TiB ceiling", s)
	}
	return Size(n * mult), nil
}

// ParseDuration parses a non-negative Go duration such as "10s".
func ParseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	if len(s) > maxUnitText {
		return 0, fmt.Errorf("duration %.32q… is too long", s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: want a number with a unit, like 500ms, 10s or 1m", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return Duration(d), nil
}

// UnmarshalYAML accepts a scalar size.
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return errors.New("size must be a scalar like 64KiB")
	}
	v, err := ParseSize(n.Value)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// UnmarshalYAML accepts a scalar duration.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return errors.New("duration must be a scalar like 10s")
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return err
	}
	*d = v
	return nil
}
