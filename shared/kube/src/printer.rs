//! Machine output (`-o json`, `-o yaml`) printed the same way by every plugin.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::flags::OutputFormat;

/// Renders `value` as pretty JSON or YAML, ending with a newline. `-o name` is not a
/// document format: callers print names themselves, so it is refused here.
pub fn render(value: &Value, format: OutputFormat) -> Result<String> {
    match format {
        OutputFormat::Json => {
            let mut text = serde_json::to_string_pretty(value)?;
            text.push('\n');
            Ok(text)
        }
        OutputFormat::Yaml => yaml(value),
        OutputFormat::Name => Err(Error::usage("-o name is not supported here; use -o json or -o yaml")),
    }
}

/// A value as a YAML document.
pub fn yaml(value: &Value) -> Result<String> {
    serde_yaml::to_string(value).map_err(|e| Error::Other(format!("cannot write YAML: {e}")))
}

/// Prints the outcome of a write the kubectl way: `deployment.apps/x patched` by
/// default, the name with `-o name`, or the object (Secret and ConfigMap values
/// redacted unless `show_secrets`) with `-o json|yaml`. A closed stdout is
/// [`Error::StdoutClosed`], so a bulk command stops at once (see [`crate::stdout`]).
pub fn print_outcome(
    display: &str,
    object: &Value,
    verb: &str,
    output: Option<OutputFormat>,
    show_secrets: bool,
) -> Result<()> {
    match output {
        None => crate::stdout::write(&format!("{display} {verb}\n")),
        Some(OutputFormat::Name) => crate::stdout::write(&format!("{display}\n")),
        Some(format) => {
            let mut shown = object.clone();
            if !show_secrets {
                crate::redact::redact(&mut shown);
            }
            crate::stdout::write(&render(&shown, format)?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_and_yaml() {
        let v = json!({"b": 1, "a": ["x"]});
        assert_eq!(render(&v, OutputFormat::Json).unwrap(), "{\n  \"b\": 1,\n  \"a\": [\n    \"x\"\n  ]\n}\n");
        assert_eq!(render(&v, OutputFormat::Yaml).unwrap(), "b: 1\na:\n- x\n");
        assert!(render(&v, OutputFormat::Name).is_err());
    }
}
