//! Field paths, field sets and the FieldsV1 wire format of `metadata.managedFields`.
