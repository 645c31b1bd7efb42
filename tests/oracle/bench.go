package main

// The oracle's bench mode: `oracle bench DIR [-min-time 2s] [-min-samples 20]
// [-max-samples 1000]` times the upstream implementations on the corpus that
// `bench_engine gen DIR` (shared/core/examples/bench_engine.rs) wrote, and prints
// one JSON document of the same shape as `bench_engine run`: nanoseconds per
// operation (every sample) and the bytes one operation allocates
// (runtime.MemStats TotalAlloc delta). scripts/bench puts the two side by side.
//
// The mode is chosen by the first argument before main runs, so the default
// stream mode (main.go) is unchanged.

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

func init() {
	if len(os.Args) > 1 && os.Args[1] == "bench" {
		if err := benchMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "oracle bench:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// benchBudget is how long each operation is sampled.
type benchBudget struct {
	minTime    time.Duration
	maxTime    time.Duration
	minSamples int
	maxSamples int
}

// benchCase is one entry of the corpus manifest.
type benchCase struct {
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// benchRow is one line of the output: one operation on one case.
type benchRow struct {
	Case            string   `json:"case"`
	Op              string   `json:"op"`
	InputBytes      int      `json:"input_bytes"`
	SamplesNs       []int64  `json:"samples_ns"`
	AllocTotalBytes uint64   `json:"alloc_total_bytes"`
	AllocPeakBytes  *uint64  `json:"alloc_peak_bytes"`
	Errors          []string `json:"errors,omitempty"`
}

func benchMain(args []string) error {
	if len(args) < 1 {
		return fmt.Errorf("usage: oracle bench DIR [-min-time 2s] [-min-samples N] [-max-samples N]")
	}
	dir := args[0]
	flags := flag.NewFlagSet("bench", flag.ContinueOnError)
	minTime := flags.Duration("min-time", 2*time.Second, "sample each operation at least this long")
	minSamples := flags.Int("min-samples", 20, "take at least this many samples")
	maxSamples := flags.Int("max-samples", 300, "take at most this many samples")
	maxTime := flags.Duration("max-time", 15*time.Second, "past this, stop once there are 3 samples (slow operations)")
	if err := flags.Parse(args[1:]); err != nil {
		return err
	}
	budget := benchBudget{*minTime, *maxTime, *minSamples, *maxSamples}
	manifestBytes, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return err
	}
	var manifest struct {
		Cases []benchCase `json:"cases"`
	}
	if err := json.Unmarshal(manifestBytes, &manifest); err != nil {
		return fmt.Errorf("manifest.json: %w", err)
	}
	var rows []benchRow
	for _, c := range manifest.Cases {
		caseRows, err := benchCaseRows(dir, c, budget)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		rows = append(rows, caseRows...)
	}
	out, err := json.Marshal(map[string]interface{}{
		"engine":  "apimachinery v0.33.13 strategicpatch/jsonmergepatch, evanphx json-patch v4.12.0 (Go " + runtime.Version() + ")",
		"results": rows,
	})
	if err != nil {
		return err
	}
	_, err = fmt.Println(string(out))
	return err
}

// benchCaseRows times every operation of one case.
func benchCaseRows(dir string, c benchCase, budget benchBudget) ([]benchRow, error) {
	file := func(name string) ([]byte, error) {
		return os.ReadFile(filepath.Join(dir, c.Name+"."+name+".json"))
	}
	var live, patch, merge, original, modified []byte
	for _, f := range []struct {
		name string
		into *[]byte
	}{{"live", &live}, {"strategic-patch", &patch}, {"merge-patch", &merge}, {"original", &original}, {"modified", &modified}} {
		b, err := file(f.name)
		if err != nil {
			return nil, err
		}
		*f.into = b
	}
	gvk := &GVK{Kind: c.Kind, Version: c.APIVersion}
	if group, version, ok := strings.Cut(c.APIVersion, "/"); ok {
		gvk.Group, gvk.Version = group, version
	}
	ref, err := schemaReference(gvk)
	if err != nil {
		return nil, err
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(ref)
	if err != nil {
		return nil, err
	}
	liveMap, err := decodeObject(live)
	if err != nil {
		return nil, err
	}
	patchMap, err := decodeObject(patch)
	if err != nil {
		return nil, err
	}
	applyIn, mergeIn, threeIn := len(live)+len(patch), len(live)+len(merge), len(original)+len(modified)+len(live)

	var rows []benchRow
	add := func(op string, input int, prepare func() func() error) {
		row := benchRow{Case: c.Name, Op: op, InputBytes: input}
		row.AllocTotalBytes = allocationOf(prepare())
		row.SamplesNs, row.Errors = benchSamples(budget, prepare)
		fmt.Fprintf(os.Stderr, "oracle bench: %s %s: %d samples\n", c.Name, op, len(row.SamplesNs))
		rows = append(rows, row)
	}
	// StrategicMergeMapPatch merges into its arguments, so each run gets fresh deep
	// copies, made outside the timing (the Rust API takes references and copies inside).
	add("strategic-apply", applyIn, func() func() error {
		o, p := kruntime.DeepCopyJSON(liveMap), kruntime.DeepCopyJSON(patchMap)
		return func() error { _, err := strategicpatch.StrategicMergeMapPatch(o, p, ref); return err }
	})
	// The same with the copies timed: what a caller that keeps its inputs pays.
	add("strategic-apply-copying", applyIn, func() func() error {
		return func() error {
			o, p := kruntime.DeepCopyJSON(liveMap), kruntime.DeepCopyJSON(patchMap)
			_, err := strategicpatch.StrategicMergeMapPatch(o, p, ref)
			return err
		}
	})
	add("strategic-apply-bytes", applyIn, func() func() error {
		return func() error { _, err := strategicpatch.StrategicMergePatch(live, patch, ref); return err }
	})
	add("strategic-three-way-bytes", threeIn, func() func() error {
		return func() error {
			_, err := strategicpatch.CreateThreeWayMergePatch(original, modified, live, meta, true)
			return err
		}
	})
	add("merge-apply-bytes", mergeIn, func() func() error {
		return func() error { _, err := jsonpatch.MergePatch(live, merge); return err }
	})
	add("merge-three-way-bytes", threeIn, func() func() error {
		return func() error {
			_, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, live)
			return err
		}
	})
	return rows, nil
}

// allocationOf is the bytes op allocates (TotalAlloc delta after a full GC).
func allocationOf(op func() error) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_ = op()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// benchSamples times runs of the operation prepare returns (preparation untimed),
// after a short warm-up, until the budget is spent (operations slower than
// maxTime/3 get 3 samples); distinct errors are kept.
func benchSamples(budget benchBudget, prepare func() func() error) ([]int64, []string) {
	seen := map[string]bool{}
	var errs []string
	note := func(err error) {
		if err != nil && !seen[err.Error()] {
			seen[err.Error()] = true
			errs = append(errs, err.Error())
		}
	}
	warm := time.Now()
	for i := 0; i < 3 && time.Since(warm) < budget.minTime/4; i++ {
		note(prepare()())
	}
	var samples []int64
	start := time.Now()
	for len(samples) < budget.maxSamples && (len(samples) < budget.minSamples || time.Since(start) < budget.minTime) {
		if len(samples) >= 3 && time.Since(start) > budget.maxTime {
			break
		}
		op := prepare()
		t := time.Now()
		err := op()
		samples = append(samples, time.Since(t).Nanoseconds())
		note(err)
	}
	return samples, errs
}
