//! Managers and what they own: `metadata.managedFields`, read and reasoned about.
