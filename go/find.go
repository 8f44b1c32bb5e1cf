package rookery

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// findCommand picks the command to start, in the documented order: the
// WithCommand option, ROOKERY_BIN, node_modules/.bin/rookery of the working
// directory or its nearest parent that has one, then rookery on the PATH.
func findCommand(explicit []string) ([]string, error) {
	if len(explicit) > 0 {
		return explicit, nil
	}
	if bin := os.Getenv("ROOKERY_BIN"); bin != "" {
		if !isExecutable(bin) {
			return nil, errors.New("rookery: ROOKERY_BIN=" + bin + " is not an executable file")
		}
		return []string{bin}, nil
	}
	looked := []string{"WithCommand", "ROOKERY_BIN"}
	if dir, err := os.Getwd(); err == nil {
		for {
			candidate := filepath.Join(dir, "node_modules", ".bin", "rookery")
			if isExecutable(candidate) {
				return []string{candidate}, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
		looked = append(looked, "node_modules/.bin/rookery of "+mustGetwd()+" and its parents")
	}
	if path, err := exec.LookPath("rookery"); err == nil {
		return []string{path}, nil
	}
	looked = append(looked, "rookery on the PATH")
	return nil, errors.New("rookery: no rookery command found (looked at " + strings.Join(looked, ", ") +
		"); set ROOKERY_BIN to the single executable's path or pass rookery.WithCommand")
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir() && info.Mode().Perm()&0o111 != 0
}

func mustGetwd() string {
	dir, _ := os.Getwd()
	return dir
}
