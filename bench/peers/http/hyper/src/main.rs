//! http-hyper: the `http` suite's server (docs/workloads.md) on hyper 0.14 + Tokio.
//!
//!     http-hyper --port P [--threads W]
//!
//! Tokio's multi-thread runtime with W workers; hyper's `Server` on 127.0.0.1:P,
//! HTTP/1.1 only, keep-alive, `http1_pipeline_flush` (answers to pipelined
//! requests leave in one write). hyper adds `Date` and `Content-Length`; `Server`
//! and `Content-Type` are set here. Routes: GET /plaintext, /json, /delay/{ms}
//! (`tokio::time::sleep`: the worker serves others meanwhile); else 404.

use hyper::header::{HeaderValue, CONTENT_TYPE, SERVER};
use hyper::server::conn::AddrIncoming;
use hyper::service::{make_service_fn, service_fn};
use hyper::{Body, Method, Request, Response, Server, StatusCode};
use peer_common::ServerFlags;
use std::convert::Infallible;
use std::time::Duration;

fn reply(status: StatusCode, content_type: &'static str, body: Body) -> Response<Body> {
    let mut r = Response::new(body);
    *r.status_mut() = status;
    r.headers_mut().insert(SERVER, HeaderValue::from_static("hyper"));
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

/// `/delay/{ms}` with ms all digits, else None.
fn delay_of(path: &str) -> Option<u64> {
    let ms = path.strip_prefix("/delay/")?;
    if ms.is_empty() || !ms.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    ms.parse().ok()
}

async fn route(req: Request<Body>) -> Result<Response<Body>, Infallible> {
    let not_found = || reply(StatusCode::NOT_FOUND, "text/plain", Body::from("Not Found"));
    if req.method() != Method::GET {
        return Ok(not_found());
    }
    Ok(match req.uri().path() {
        "/plaintext" => reply(StatusCode::OK, "text/plain", Body::from("Hello, World!")),
        "/json" => reply(StatusCode::OK, "application/json", Body::from(r#"{"message":"Hello, World!"}"#)),
        path => match delay_of(path) {
            Some(ms) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                reply(StatusCode::OK, "text/plain", Body::from(ms.to_string()))
            }
            None => not_found(),
        },
    })
}

async fn serve(port: u16) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // Tokio's bind listens with a backlog of 1,024 (std's: 128, too few for the
    // delay scenario's 1,000 connections arriving at once).
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let mut incoming = AddrIncoming::from_listener(listener)?;
    incoming.set_nodelay(true);
    let server = Server::builder(incoming)
        .http1_only(true)
        .http1_keepalive(true)
        .http1_pipeline_flush(true);
    server.serve(make_service_fn(|_| async { Ok::<_, Infallible>(service_fn(route)) })).await?;
    Ok(())
}

fn main() {
    let flags = ServerFlags::parse("http-hyper");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(flags.threads)
        .enable_all()
        .build()
        .expect("tokio runtime");
    // The server runs as a task, so only the W workers serve (block_on's thread waits).
    match rt.block_on(async { tokio::spawn(serve(flags.port)).await }) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            eprintln!("http-hyper: 127.0.0.1:{}: {e}", flags.port);
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("http-hyper: {e}");
            std::process::exit(1);
        }
    }
}
