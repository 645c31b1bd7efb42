//! A tiny HTTP CONNECT proxy on loopback (a kubeconfig's `proxy-url`), for tests of what
//! goes through a proxy: it counts the tunnels it opens, and drops every open one on
//! demand, as a network does to a long watch.

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The running proxy.
pub struct ConnectProxy {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    tunnels: Arc<AtomicUsize>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl ConnectProxy {
    /// Starts the proxy on a free port, on threads of its own.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let tunnels = Arc::new(AtomicUsize::new(0));
        let open = Arc::new(Mutex::new(Vec::new()));
        let (count, streams) = (tunnels.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let (count, streams) = (count.clone(), streams.clone());
                std::thread::spawn(move || tunnel(client, &count, &streams));
            }
        });
        ConnectProxy { url, tunnels, open }
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

fn tunnel(client: TcpStream, count: &AtomicUsize, open: &Mutex<Vec<TcpStream>>) {
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
    let (mut up_read, mut up_write) = (upstream.try_clone().unwrap(), upstream);
    let mut client_write = client;
    let pump = std::thread::spawn(move || {
        let _ = std::io::copy(&mut reader, &mut up_write);
        let _ = up_write.shutdown(Shutdown::Write);
    });
    let _ = std::io::copy(&mut up_read, &mut client_write);
    let _ = client_write.shutdown(Shutdown::Write);
    let _ = pump.join();
}
