package config

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Duration is a time.Duration written in harness.toml as a Go duration
// string: "5m", "30s", "1h30m", or "0" to turn a budget off. The zero value
// means off.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats d the way harness.toml writes it: "0", "90s", "5m", "1h",
// and time.Duration's form for anything else ("1h30m0s", "1.5s").
func (d Duration) String() string {
	t := time.Duration(d)
	switch {
	case t == 0:
		return "0"
	case t%time.Hour == 0:
		return fmt.Sprintf("%dh", t/time.Hour)
	case t%time.Minute == 0 && t < time.Hour:
		return fmt.Sprintf("%dm", t/time.Minute)
	case t%time.Second == 0 && t < time.Minute:
		return fmt.Sprintf("%ds", t/time.Second)
	}
	return t.String()
}

// errDuration is the reason every bad duration gives.
var errDuration = errors.New(`is not a duration (use e.g. "5m", or "0" to turn it off)`)

// ParseDuration parses a duration setting: a Go duration string or "0".
// Negative durations are refused.
func ParseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	t, err := time.ParseDuration(s)
	if err != nil {
		return 0, errDuration
	}
	if t < 0 {
		return 0, errors.New(`is negative (use "0" to turn it off)`)
	}
	return Duration(t), nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q %w", b, err)
	}
	*d = v
	return nil
}
