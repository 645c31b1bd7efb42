//! A tiny HTTP CONNECT proxy on loopback (a kubeconfig's `proxy-url`), for tests of what
//! goes through a proxy: it counts the tunnels it opens, and drops every open one on
//! demand, as a network does to a long watch, or stops forwarding without closing anything
//! (a black hole: [`ConnectProxy::stall`]), as a dead link or a stuck middlebox does.

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The running proxy.
pub struct ConnectProxy {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    tunnels: Arc<AtomicUsize>,
    open: Arc<Mutex<Vec<TcpStream>>>,
    stalled: Arc<AtomicBool>,
}

impl ConnectProxy {
    /// Starts the proxy on a free port, on threads of its own.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let tunnels = Arc::new(AtomicUsize::new(0));
        let open = Arc::new(Mutex::new(Vec::new()));
        let stalled = Arc::new(AtomicBool::new(false));
        let (count, streams, stall) = (tunnels.clone(), open.clone(), stalled.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let (count, streams, stall) = (count.clone(), streams.clone(), stall.clone());
                std::thread::spawn(move || tunnel(client, &count, &streams, &stall));
            }
        });
        ConnectProxy { url, tunnels, open, stalled }
    }

    /// Stops forwarding, both ways, on every tunnel, open or new, closing nothing: bytes
    /// wait in the proxy and new tunnels are accepted but never answered, so a client
    /// notices only by its own timers. [`ConnectProxy::resume`] forwards again.
    pub fn stall(&self) {
        self.stalled.store(true, Ordering::SeqCst);
    }

    /// Forwards again after [`ConnectProxy::stall`] (what waited goes on).
    pub fn resume(&self) {
        self.stalled.store(false, Ordering::SeqCst);
    }

    /// How many tunnels it opened so far.
    pub fn tunnels(&self) -> usize {
        self.tunnels.load(Ordering::SeqCst)
    }

    /// Cuts every open tunnel, both ways: the clients see their connections drop.
    pub fn drop_connections(&self) -> usize {
        let mut open = self.open.lock().unwrap();
        for stream in open.iter() {
            let _ = stream.shutdown(Shutdown::Both);
        }
        let dropped = open.len();
        open.clear();
        dropped
    }
}

/// Waits while the proxy is stalled.
fn hold(stalled: &AtomicBool) {
    while stalled.load(Ordering::SeqCst) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Copies `from` to `to` until either ends, holding each chunk while the proxy is stalled.
fn pump(mut from: impl std::io::Read, mut to: impl std::io::Write, stalled: &AtomicBool) {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        hold(stalled);
        let n = match from.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        hold(stalled);
        if to.write_all(&buffer[..n]).is_err() {
            return;
        }
    }
}

fn tunnel(client: TcpStream, count: &AtomicUsize, open: &Mutex<Vec<TcpStream>>, stalled: &Arc<AtomicBool>) {
    hold(stalled);
    let mut reader = BufReader::new(client.try_clone().unwrap());
    let mut request_line = String::new();
    reader.read_line(&mut request_line).unwrap();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
            break;
        }
    }
    let mut words = request_line.split_whitespace();
    let (Some("CONNECT"), Some(target)) = (words.next(), words.next()) else {
        let _ = (&client).write_all(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n");
        return;
    };
    let Ok(upstream) = TcpStream::connect(target) else {
        let _ = (&client).write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n");
        return;
    };
    count.fetch_add(1, Ordering::SeqCst);
    (&client).write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").unwrap();
    {
        let mut open = open.lock().unwrap();
        open.push(client.try_clone().unwrap());
        open.push(upstream.try_clone().unwrap());
    }
    hold(stalled);
    let (up_read, up_write) = (upstream.try_clone().unwrap(), upstream);
    let client_write = client;
    let upward = stalled.clone();
    let pumping = std::thread::spawn(move || {
        pump(reader, &up_write, &upward);
        let _ = up_write.shutdown(Shutdown::Write);
    });
    pump(up_read, &client_write, stalled);
    let _ = client_write.shutdown(Shutdown::Write);
    let _ = pumping.join();
}
