package release

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestChecksumsVerify: every line of SHA256SUMS names an archive of dist whose sha256 it gives
// (as `sha256sum --strict -c` checks), one line per archive.
func TestChecksumsVerify(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	line := regexp.MustCompile(`^([0-9a-f]{64})  ([^/\s]+\.tar\.gz)$`)
	for _, l := range lines {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("malformed SHA256SUMS line %q", l)
			continue
		}
		archive, err := os.ReadFile(filepath.Join(dist, m[2]))
		if err != nil {
			t.Error(err)
			continue
		}
		if sum := sha256.Sum256(archive); hex.EncodeToString(sum[:]) != m[1] {
			t.Errorf("%s: sha256 %x, SHA256SUMS says %s", m[2], sum, m[1])
		}
	}
	t.Logf("%d archives verified", len(lines))
}

// TestArchiveCount: one archive per plugin and platform built, each in SHA256SUMS.
func TestArchiveCount(t *testing.T) {
	archives, _ := filepath.Glob(filepath.Join(dist, "*.tar.gz"))
	sums, err := countLines(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	want := len(plugins) * len(platforms)
	if len(archives) != want || sums != want {
		t.Fatalf("%d archives and %d SHA256SUMS lines, want %d (%d plugins x %d platforms): %v", len(archives), sums, want, len(plugins), len(platforms), archives)
	}
	t.Logf("%d archives (%d plugins x %d platforms)", want, len(plugins), len(platforms))
}

// TestArchiveContents: each archive holds exactly its binary, LICENSE, README.md and a
// THIRD-PARTY-LICENSES.txt generated from the tree (naming crates the binary links, with their
// license texts).
func TestArchiveContents(t *testing.T) {
	for _, platform := range allPlatforms {
		for _, plugin := range plugins {
			t.Run(osArch(platform)+"/"+plugin, func(t *testing.T) {
				needPlatform(t, platform)
				listing, err := archiveListing(archivePath(plugin, platform))
				if err != nil {
					t.Fatal(err)
				}
				want := []string{binName(plugin, platform), "LICENSE", "README.md", "THIRD-PARTY-LICENSES.txt"}
				slices.Sort(want)
				if !slices.Equal(listing, want) {
					t.Errorf("archive holds %v, want %v", listing, want)
				}
				licenses, err := os.ReadFile(filepath.Join(unpack(t, plugin, platform), "THIRD-PARTY-LICENSES.txt"))
				if err != nil {
					t.Fatal(err)
				}
				text := string(licenses)
				for _, want := range []string{"\n  - tokio ", "\n  - clap ", "Apache License", "Permission is hereby granted"} {
					if !strings.Contains(text, want) {
						t.Errorf("THIRD-PARTY-LICENSES.txt lacks %q:\n%s", want, clip(text))
					}
				}
				crates := regexp.MustCompile(`(?m)^Crates: (.*)$`).FindStringSubmatch(text)
				if crates == nil {
					t.Errorf("THIRD-PARTY-LICENSES.txt has no Crates: line:\n%s", clip(text))
				} else {
					t.Log(fmt.Sprintf("%v (%s crates' licenses)", listing, crates[1]))
				}
			})
		}
	}
}
