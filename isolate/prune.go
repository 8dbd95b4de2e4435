package isolate

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// ImagesArgs lists the images harness built (label harness.run=image):
// one "ID REPOSITORY:TAG" a line.
func (e *Engine) ImagesArgs() []string {
	return []string{e.Bin, "images", "--filter", "label=" + Label + "=image", "--format", "{{.ID}} {{.Repository}}:{{.Tag}}"}
}

// TaskImages is the name prefix of the task images (ImageTag).
const TaskImages = "localhost/harness-task-"

// PruneImages removes the images harness built whose name starts with
// prefix (TaskImages: every task image), but those named in keep (the
// current tasks' tags): each content hash is a tag, so every change of a
// task left one behind. It returns what it removed; an image a container
// still uses is not removed, and its error is returned (the others are
// removed all the same).
func PruneImages(ctx context.Context, e *Engine, prefix string, keep []string) (removed []string, err error) {
	out, err := Run(ctx, e.ImagesArgs())
	if err != nil {
		return nil, err
	}
	var errs []string
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		_, ref, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || !strings.HasPrefix(ref, prefix) || slices.Contains(keep, ref) || seen[ref] {
			continue
		}
		seen[ref] = true
		if _, rerr := Run(ctx, []string{e.Bin, "rmi", ref}); rerr != nil {
			errs = append(errs, rerr.Error())
			continue
		}
		removed = append(removed, ref)
	}
	if len(errs) > 0 {
		return removed, errors.New("isolate " + e.Name + ": " + strings.Join(errs, "; "))
	}
	return removed, nil
}
