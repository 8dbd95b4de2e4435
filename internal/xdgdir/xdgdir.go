// Package xdgdir owns where harness keeps its files under the XDG base
// directories: $XDG_CONFIG_HOME, $XDG_DATA_HOME and $XDG_CACHE_HOME,
// each with the platform's directory (adrg/xdg) when the variable is not
// set, and harness's own folder in it.
package xdgdir

import (
	"path/filepath"

	"github.com/adrg/xdg"
)

// Config returns $XDG_CONFIG_HOME/harness/elem….
func Config(getenv func(string) string, elem ...string) string {
	return join(getenv, "XDG_CONFIG_HOME", xdg.ConfigHome, elem)
}

// Data returns $XDG_DATA_HOME/harness/elem….
func Data(getenv func(string) string, elem ...string) string {
	return join(getenv, "XDG_DATA_HOME", xdg.DataHome, elem)
}

// Cache returns $XDG_CACHE_HOME/harness/elem….
func Cache(getenv func(string) string, elem ...string) string {
	return join(getenv, "XDG_CACHE_HOME", xdg.CacheHome, elem)
}

// join reads the variable through getenv (nil: not set), so callers can
// resolve paths for an environment other than the process's.
func join(getenv func(string) string, name, platform string, elem []string) string {
	base := ""
	if getenv != nil {
		base = getenv(name)
	}
	if base == "" {
		base = platform
	}
	return filepath.Join(append([]string{base, "harness"}, elem...)...)
}
