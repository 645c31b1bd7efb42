//! `scripts/bench watch`'s writer: changes ConfigMaps that `bench_load` made at a steady
//! rate, each change by a known manager, and logs every change that landed, so a watcher's
//! output can be checked against it (changes reported vs made, the manager named, lag).
//!
//! Usage: `bench_write PREFIX OBJECTS RATE SECONDS LOG` (KUBECONFIG from the environment).
//! Change `k` sets `data.v` to `k` in the `k mod M`-th of the M ConfigMaps among `bench_load`'s
//! objects `0..OBJECTS` (the 215 KB ones left out), as a merge patch with the field manager
//! `bench-writer-0` or `bench-writer-1`, alternating at each round over the ConfigMaps, so
//! every change is written by another manager than the one before it on that object (one
//! managedFields entry moves). RATE changes a second are started on a fixed clock, up to 64 in
//! flight. Each landed change is one LOG line: `NAMESPACE NAME VALUE MANAGER SENT_MS DONE_MS` (Unix
//! milliseconds when the request was sent and when the apiserver answered). A JSON summary goes
//! to stdout.

use std::io::Write as _;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fieldwise_kube::api::objects::send;
use fieldwise_kube::conn::client;
use fieldwise_kube::conn::flags::KubeFlags;
use futures::stream::{FuturesUnordered, StreamExt};
use http::Request;
use serde_json::json;

const NAMESPACES: usize = 10;
const IN_FLIGHT: usize = 64;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let [_, prefix, objects, rate, seconds, log] = &args[..] else {
        return Err("usage: bench_write PREFIX OBJECTS RATE SECONDS LOG".into());
    };
    let number = |name: &str, text: &str| text.parse::<usize>().map_err(|e| format!("{name}: {e}"));
    let (objects, rate, seconds) = (number("OBJECTS", objects)?, number("RATE", rate)?, number("SECONDS", seconds)?);
    // The ConfigMaps of bench_load's objects (85 in 100), without the oversized ones.
    let targets: Vec<usize> = (0..objects).filter(|i| i % 100 < 85 && i % 1000 != 7).collect();
    if targets.is_empty() || rate == 0 {
        return Err("no ConfigMaps to change, or a rate of 0".into());
    }
    let flags = KubeFlags { request_timeout: "60s".into(), ..Default::default() };
    let conn = client::connect(&flags).await.map_err(|e| e.to_string())?;
    let mut log = std::io::BufWriter::new(std::fs::File::create(log).map_err(|e| format!("{log}: {e}"))?);
    let total = rate * seconds;
    let mut clock = tokio::time::interval(Duration::from_secs_f64(1.0 / rate as f64));
    let mut in_flight = FuturesUnordered::new();
    let (mut landed, mut failed, mut first_error) = (0usize, 0usize, None::<String>);
    let started = Instant::now();
    let mut record = |result: Result<String, String>, log: &mut std::io::BufWriter<std::fs::File>| match result {
        Ok(line) => {
            landed += 1;
            let _ = writeln!(log, "{line}");
        }
        Err(e) => {
            failed += 1;
            first_error.get_or_insert(e);
        }
    };
    for k in 0..total {
        clock.tick().await;
        while in_flight.len() >= IN_FLIGHT {
            if let Some(result) = in_flight.next().await {
                record(result, &mut log);
            }
        }
        let i = targets[k % targets.len()];
        let (namespace, name) = (format!("{prefix}-{}", i % NAMESPACES), format!("obj-{i:06}"));
        let manager = format!("bench-writer-{}", (k / targets.len()) % 2);
        let conn = &conn;
        in_flight.push(async move {
            let sent = unix_millis();
            let body = serde_json::to_vec(&json!({"data": {"v": k.to_string()}})).map_err(|e| e.to_string())?;
            let request =
                Request::patch(format!("/api/v1/namespaces/{namespace}/configmaps/{name}?fieldManager={manager}"))
                    .header(http::header::CONTENT_TYPE, "application/merge-patch+json")
                    .body(body);
            send(conn, request).await.map_err(|e| format!("{namespace}/{name}: {e}"))?;
            Ok(format!("{namespace} {name} {k} {manager} {sent} {}", unix_millis()))
        });
        // Collect what has finished without waiting, so the log keeps up.
        while let Some(Some(result)) = futures::FutureExt::now_or_never(in_flight.next()) {
            record(result, &mut log);
        }
    }
    while let Some(result) = in_flight.next().await {
        record(result, &mut log);
    }
    log.flush().map_err(|e| e.to_string())?;
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "{}",
        json!({"made": landed, "failed": failed, "planned": total, "seconds": elapsed,
               "rate": landed as f64 / elapsed, "target_rate": rate, "first_error": first_error})
    );
    Ok(())
}

fn unix_millis() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis()
}
