package isolate

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ImageTag is the tag of the image built from a task's build context: its
// name and the context's content hash, so that a changed context is a
// new image and an unchanged one is built once.
func ImageTag(task, digest string) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '-'
	}, task)
	name = strings.Trim(name, "-_.")
	if name == "" {
		name = "task"
	}
	return TaskImages + name + ":" + digest
}

// ContextDigest hashes a build context (every file's path, mode and
// content; symlinks by their target), 16 bytes as hex.
func ContextDigest(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%o\x00", filepath.ToSlash(rel), info.Mode())
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			h.Write([]byte(target))
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		h.Write([]byte{0})
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("isolate: build context: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// buildArg is the build argument that names one podman build: buildah
// keeps a build's arguments in the state of each working container it
// makes (buildah.json in the container's storage directory), the only
// mark such a container has of its build (no label: --label is set on
// the image when it is committed). An argument no Dockerfile declares
// changes no cached layer.
const buildArg = "harness.build"

// Build builds contextDir's Dockerfile as image (BuildArgs) with Run. A
// podman build cancelled between two steps exits at once and leaves its
// working container, which nothing removes later (it has no label for
// prune to find): so when a podman build fails, the working containers
// of this build, and of no other, are removed. Docker's daemon ends a
// cancelled build itself.
func (e *Engine) Build(ctx context.Context, image, contextDir string) error {
	argv := e.BuildArgs(image, contextDir)
	if e.Name != Podman {
		_, err := Run(ctx, argv)
		return err
	}
	var b [8]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	_, err := Run(ctx, slices.Insert(argv, 2, "--build-arg", buildArg+"="+id))
	if err == nil {
		return nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	ids, rerr := e.buildContainers(rctx, id)
	for _, c := range ids {
		if _, err := Run(rctx, e.RemoveArgs(c)); err != nil && rerr == nil {
			rerr = err
		}
	}
	if rerr != nil {
		return fmt.Errorf("%w (and removing its working container: %v)", err, rerr)
	}
	return err
}

// buildContainers lists the working containers of podman build id
// (buildArg): buildah's own state of each, in the engine's storage.
func (e *Engine) buildContainers(ctx context.Context, id string) ([]string, error) {
	out, err := Run(ctx, []string{e.Bin, "info", "--format", "{{.Store.GraphRoot}}\n{{.Store.GraphDriverName}}"})
	if err != nil {
		return nil, err
	}
	root, driver, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	states, _ := filepath.Glob(filepath.Join(root, driver+"-containers", "*", "userdata", "buildah.json"))
	var ids []string
	for _, p := range states {
		var st struct {
			Args map[string]string `json:"Args"`
			ID   string            `json:"container-id"`
		}
		b, err := os.ReadFile(p)
		if err == nil && json.Unmarshal(b, &st) == nil && st.Args[buildArg] == id && st.ID != "" {
			ids = append(ids, st.ID) // else another's, or gone meanwhile
		}
	}
	return ids, nil
}
