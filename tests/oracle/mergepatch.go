package main

import (
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
)

// mergePatchApply applies an RFC 7386 merge patch the way the apiserver does
// for application/merge-patch+json: jsonpatch.MergePatch (json-patch.v4) on
// the JSON of the current object; every error rejects the patch.
func mergePatchApply(doc, patch []byte) Result {
	patched, err := jsonpatch.MergePatch(doc, patch)
	if err != nil {
		return rejected(err)
	}
	return accepted(patched)
}

// mergePatchCreateTwoWay creates a merge patch from original to modified with
// jsonpatch.CreateMergePatch (json-patch.v4), the function
// jsonmergepatch.CreateThreeWayJSONMergePatch builds on and kubectl uses.
func mergePatchCreateTwoWay(original, modified []byte) Result {
	patch, err := jsonpatch.CreateMergePatch(original, modified)
	if err != nil {
		return rejected(err)
	}
	return accepted(patch)
}

// mergePatchCreateThreeWay is kubectl apply's patch for types without a Go
// struct: jsonmergepatch.CreateThreeWayJSONMergePatch, no preconditions.
func mergePatchCreateThreeWay(original, modified, current []byte) Result {
	patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, current)
	if err != nil {
		return rejected(err)
	}
	return accepted(patch)
}
