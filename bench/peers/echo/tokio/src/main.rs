//! echo-tokio: the `echo` suite's server (docs/workloads.md) on Tokio.
//!
//!     echo-tokio --port P [--threads W]
//!
//! Tokio's multi-thread runtime with W workers; a listener on 127.0.0.1:P whose
//! accept loop is itself a task (so only the W workers do the work); one task per
//! connection: read up to 16 KiB, `write_all` exactly those bytes, repeat until EOF.
//! TCP_NODELAY on every connection. See README.md.

use peer_common::ServerFlags;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

async fn echo(mut conn: TcpStream) {
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n @ 1..) = conn.read(&mut buf).await {
        if conn.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
}

async fn accept_loop(listener: TcpListener) {
    loop {
        match listener.accept().await {
            Ok((conn, _)) => {
                let _ = conn.set_nodelay(true);
                tokio::spawn(echo(conn));
            }
            Err(e) => {
                // Out of file descriptors, usually: wait a little rather than spin.
                eprintln!("echo-tokio: accept: {e}");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }
}

fn main() {
    let flags = ServerFlags::parse("echo-tokio");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(flags.threads)
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(async {
        let listener = TcpListener::bind(("127.0.0.1", flags.port)).await.unwrap_or_else(|e| {
            eprintln!("echo-tokio: bind 127.0.0.1:{}: {e}", flags.port);
            std::process::exit(1)
        });
        tokio::spawn(accept_loop(listener)).await.expect("accept loop");
    });
}
