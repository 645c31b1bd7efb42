//! Command-line parsing with kubectl's exit codes: help and version exit 0,
//! every usage error exits 1 (clap's default of 2 would collide with the
//! "findings" code some plugins use).

use std::process::ExitCode;

use clap::Parser;

/// Parses the command line, or prints help/version/usage error and exits.
pub fn parse<T: Parser>() -> T {
    match T::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { 1 } else { 0 };
            let _ = err.print();
            std::process::exit(code);
        }
    }
}

/// Prints an error the way kubectl does and turns it into the exit code.
pub fn fail(err: &crate::Error) -> ExitCode {
    eprintln!("{err}");
    ExitCode::from(err.exit_code())
}

/// Runs an async entry point on a small runtime: plugins are short-lived CLIs.
pub fn run<F>(future: F) -> ExitCode
where
    F: std::future::Future<Output = crate::Result<ExitCode>>,
{
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(&crate::Error::Other(format!("cannot start the async runtime: {e}"))),
    };
    match runtime.block_on(future) {
        Ok(code) => code,
        Err(err) => fail(&err),
    }
}
