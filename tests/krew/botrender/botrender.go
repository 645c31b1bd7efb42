// Package botrender renders a krew-release-bot manifest template with Go's text/template, the
// engine and the two functions (indent, addURIAndSha) the bot renders templates with, so that
// the release tests (tests/krew/release) can compare packaging/render-krew-manifest.py's output
// with it byte for byte.
// The bot's own module is not on the Go module proxy here; this follows its documented
// behaviour: addURIAndSha renders the URL as a template with TagName and Version, and returns
// "uri: URL" and, on the next line indented by four spaces, "sha256: HEX" of the asset. The bot
// downloads the asset; here it is read from DIST by the URL's last path element.
package botrender

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
)

type release struct {
	TagName string
	Version string
}

func newRelease(tag string) release {
	version := regexp.MustCompile(`\d+(\.\d+)+`).FindString(tag)
	if version == "" {
		version = tag
	}
	return release{TagName: tag, Version: version}
}

// Render renders templateFile for the release tag as the bot would, reading each asset named by
// an addURIAndSha URL from dist (the bot downloads it) to fill in its sha256.
func Render(templateFile, tag, dist string) ([]byte, error) {
	var assetErr error
	funcs := template.FuncMap{
		"indent": func(spaces int, v string) string {
			v = strings.ReplaceAll(v, "    sha256:", "sha256:")
			pad := strings.Repeat(" ", spaces)
			return strings.TrimSpace(pad + strings.ReplaceAll(v, "\n", "\n"+pad))
		},
		"addURIAndSha": func(url, tag string) string {
			var buf bytes.Buffer
			t, err := template.New("url").Parse(url)
			if err == nil {
				err = t.Execute(&buf, newRelease(tag))
			}
			if err != nil {
				assetErr = err
				return ""
			}
			data, err := os.ReadFile(filepath.Join(dist, path.Base(buf.String())))
			if err != nil {
				assetErr = err
				return ""
			}
			sum := sha256.Sum256(data)
			return fmt.Sprintf("uri: %s\n    sha256: %s", buf.String(), hex.EncodeToString(sum[:]))
		},
	}
	t, err := template.New(filepath.Base(templateFile)).Funcs(funcs).ParseFiles(templateFile)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := t.Execute(&out, newRelease(tag)); err != nil {
		return nil, err
	}
	if assetErr != nil {
		return nil, assetErr
	}
	return out.Bytes(), nil
}
