package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentharness/harness/internal/regfile"
	"github.com/agentharness/harness/internal/urlmask"
	"github.com/agentharness/harness/internal/xdgdir"
)

// maxModelsFile bounds what Update reads: a models table is a few KB.
const maxModelsFile = 4 << 20

// UpdateResult says what Update installed.
type UpdateResult struct {
	Path    string // the cache file written
	Aliases int
	Prices  int
}

// Update replaces the user model cache at userCache with the models file
// found at from: an http:// or https:// URL, fetched with fetch, or a local
// path. The new file is validated (ParseFile) before anything is written,
// then written to a temporary file in the cache's directory and renamed
// over the cache, so a reader never sees a partial file and a bad download
// leaves the old cache in place. fetch nil means a plain HTTP GET with a
// 30 s timeout.
func Update(from, userCache string, fetch func(url string) ([]byte, error)) (UpdateResult, error) {
	if userCache == "" {
		return UpdateResult{}, errors.New("registry: update: no cache path")
	}
	var data []byte
	var err error
	// shown is how messages name from: a URL's user, password and query
	// values masked (urlmask), where a download's key often is (?token=…).
	shown := from
	if strings.HasPrefix(from, "http://") || strings.HasPrefix(from, "https://") {
		shown = urlmask.Mask(from)
		if fetch == nil {
			fetch = httpGet
		}
		data, err = fetch(from)
		if err == nil && len(data) > maxModelsFile {
			err = fmt.Errorf("larger than %d bytes", maxModelsFile)
		}
		if err != nil {
			return UpdateResult{}, &FetchError{URL: shown, Err: masked(err, from, shown)}
		}
	} else {
		// A FIFO or a device given as the file is refused, not read: the
		// open of a FIFO waits for a writer, and a device may never end.
		data, err = regfile.ReadFile(from, maxModelsFile)
	}
	if err != nil {
		return UpdateResult{}, fmt.Errorf("registry: update from %s: %w", shown, err)
	}
	f, err := ParseFile(shown, data)
	if err != nil {
		return UpdateResult{}, err
	}
	if len(f.Aliases) == 0 && len(f.Prices) == 0 {
		return UpdateResult{}, fmt.Errorf("registry: update from %s: no aliases and no prices", shown)
	}
	err = os.MkdirAll(filepath.Dir(userCache), 0o700)
	if err == nil {
		err = regfile.WriteFile(userCache, data, 0o600, regfile.Synced())
	}
	if err != nil {
		return UpdateResult{}, &CacheWriteError{Path: userCache, Err: cacheWriteCause(err, userCache)}
	}
	return UpdateResult{Path: userCache, Aliases: len(f.Aliases), Prices: len(f.Prices)}, nil
}

// CacheWriteError is an Update whose models file was good but could not
// be written to the cache at Path: a full disk, a read-only directory, a
// file where its directory belongs. Like a FetchError it is neither the
// caller's usage nor a wrong models file; the old cache is left in place.
type CacheWriteError struct {
	Path string
	Err  error
}

func (e *CacheWriteError) Error() string {
	return "registry: update: cannot write the model cache " + e.Path + ": " + e.Err.Error()
}
func (e *CacheWriteError) Unwrap() error { return e.Err }

// cacheWriteCause is err without the path of the cache or of its
// temporary file, which the CacheWriteError names already ("write
// …/.models.toml.123.tmp: no space left on device" is "no space left on
// device"); a parent directory's path (mkdir) is kept: it is the culprit.
func cacheWriteCause(err error, cache string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path != filepath.Dir(cache) && filepath.Dir(pe.Path) == filepath.Dir(cache) {
		return pe.Err
	}
	return err
}

// FetchError is an Update whose URL could not be fetched: the network,
// the server's answer (not 200 OK), or a body over the size taken. It is
// neither the caller's usage nor a wrong models file, as Update's other
// errors are but a CacheWriteError. URL is masked
// (urlmask); so is every URL in Err.
type FetchError struct {
	URL string
	Err error
}

func (e *FetchError) Error() string { return "registry: update from " + e.URL + ": " + e.Err.Error() }
func (e *FetchError) Unwrap() error { return e.Err }

// masked is err with the URL from masked as shown: Go's *url.Error names
// the URL it asked for (its query whole, only a password masked), a
// redirect's too, and another error may quote from whole.
func masked(err error, from, shown string) error {
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		ue.URL = urlmask.Mask(ue.URL)
	}
	msg := strings.ReplaceAll(err.Error(), from, shown)
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

// redactedError is err said with its URL masked; errors.Is still finds
// what err wraps.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func httpGet(url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsFile+1))
	if err == nil && len(data) > maxModelsFile {
		err = fmt.Errorf("larger than %d bytes", maxModelsFile)
	}
	return data, err
}

// DefaultCachePath returns where the user model cache lives:
// $XDG_CACHE_HOME/harness/models.toml, with the platform's cache directory
// (adrg/xdg) when getenv reports no XDG_CACHE_HOME.
func DefaultCachePath(getenv func(string) string) string {
	return xdgdir.Cache(getenv, "models.toml")
}
