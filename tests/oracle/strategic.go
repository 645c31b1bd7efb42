package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
	kjson "sigs.k8s.io/json"
)

// schemaReference returns an empty Go value of a built-in kind, which
// strategicpatch reads patch strategies and merge keys from (struct tags), as
// the apiserver's schemaReferenceObj is.
func schemaReference(gvk *GVK) (runtime.Object, error) {
	if gvk == nil {
		return nil, errors.New("oracle: case has no gvk")
	}
	kind := schema.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
	obj, err := scheme.Scheme.New(kind)
	if err != nil {
		return nil, fmt.Errorf("oracle: unknown kind %v: %w", kind, err)
	}
	return obj, nil
}

// decodeObject decodes JSON the way the apiserver decodes a strategic patch
// body (sigs.k8s.io/json, integers kept as int64, floats as float64).
func decodeObject(doc []byte) (map[string]interface{}, error) {
	m := map[string]interface{}{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(doc, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// strategicApply applies a strategic merge patch the way the apiserver's
// strategicPatchObject does: StrategicMergeMapPatch on the map of the current
// object with the Go type as schema. The apiserver reaches that map through
// the typed object (runtime.DefaultUnstructuredConverter.ToUnstructured) and
// converts the result back to the typed object and defaults it; those steps
// belong to the object layer, not to the patch engine, and are left out: the
// original here is the JSON given, decoded with integers preserved as the
// converter would produce them.
func strategicApply(gvk *GVK, original, patch []byte) Result {
	ref, err := schemaReference(gvk)
	if err != nil {
		return Result{Error: err.Error(), BadCase: true}
	}
	originalMap, err := decodeObject(original)
	if err != nil {
		return Result{Error: "oracle: original: " + err.Error(), BadCase: true}
	}
	patchMap, err := decodeObject(patch)
	if err != nil {
		return rejected(err)
	}
	patched, err := strategicpatch.StrategicMergeMapPatch(originalMap, patchMap, ref)
	if err != nil {
		return rejected(err)
	}
	return marshalled(patched)
}

// strategicCreateTwoWay is strategicpatch.CreateTwoWayMergePatch with the Go
// type as schema (kubectl edit, set, label, annotate...).
func strategicCreateTwoWay(gvk *GVK, original, modified []byte) Result {
	ref, err := schemaReference(gvk)
	if err != nil {
		return Result{Error: err.Error(), BadCase: true}
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(original, modified, ref)
	if err != nil {
		return rejected(err)
	}
	return accepted(patch)
}

// strategicCreateThreeWay is kubectl apply's patch for built-in types:
// strategicpatch.CreateThreeWayMergePatch with NewPatchMetaFromStruct of the
// Go type, no preconditions.
func strategicCreateThreeWay(gvk *GVK, original, modified, current []byte, overwrite bool) Result {
	ref, err := schemaReference(gvk)
	if err != nil {
		return Result{Error: err.Error(), BadCase: true}
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(ref)
	if err != nil {
		return Result{Error: "oracle: " + err.Error(), BadCase: true}
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current, meta, overwrite)
	if err != nil {
		return rejected(err)
	}
	return accepted(patch)
}

// marshalled encodes an upstream map result as JSON.
func marshalled(v interface{}) Result {
	doc, err := json.Marshal(v)
	if err != nil {
		return rejected(err)
	}
	return accepted(doc)
}
