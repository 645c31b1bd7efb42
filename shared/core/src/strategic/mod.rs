//! Strategic Merge Patch, as `k8s.io/apimachinery/pkg/util/strategicpatch` does it.
