//! `kubectl owners`: who owns each field of an object, and who owns the object.

mod summary;

use std::process::ExitCode;

use clap::Parser;
use fieldwise_kube::{cli, client, discovery::ResourceCatalog, flags::KubeFlags, objects, target::TargetArgs, version};

const EXAMPLES: &str = "Examples:
  # Who manages which fields of a Deployment, one row per manager
  kubectl owners deploy/busybox-demo --summary

  # The same, for an object in another namespace and context
  kubectl owners deployment busybox-demo -n prod --context staging --summary";

/// Show who owns each field of a Kubernetes object (managedFields), and who owns the object.
#[derive(Debug, Parser)]
#[command(name = "kubectl owners", bin_name = "kubectl owners", version = version::LONG_VERSION, after_help = EXAMPLES)]
struct Cli {
    #[command(flatten)]
    kube: KubeFlags,

    /// The object: TYPE/NAME or TYPE NAME (types by name, short name or kind, as kubectl resolves them).
    #[arg(value_name = "TYPE/NAME", required = true)]
    targets: Vec<String>,

    /// One row per manager: operation, subresource, apiVersion, last time, fields owned.
    #[arg(long)]
    summary: bool,
}

fn main() -> ExitCode {
    let cli: Cli = cli::parse();
    cli::run(run(cli))
}

async fn run(cli: Cli) -> fieldwise_kube::Result<ExitCode> {
    let args = TargetArgs::parse(&cli.targets)?;
    let conn = client::connect(&cli.kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    let targets = args.resolve(&catalog, &conn.namespace)?;
    for target in &targets {
        if target.name.is_empty() {
            return Err(fieldwise_kube::Error::usage(format!(
                "a name is required: {}/NAME",
                target.resource.display_name()
            )));
        }
        let object = objects::get(&conn, target, None).await?;
        print!("{}", summary::render(&target.display(), &object));
    }
    Ok(ExitCode::SUCCESS)
}
