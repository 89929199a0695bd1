//! arena-hyper: the `arena` suite's peer (bench/peers/arena/README.md) on hyper 0.14 + Tokio.
//!
//!     arena-hyper --port P --threads W --data DIR [--h2c-port Q]
//!
//! Tokio's multi-thread runtime with W workers; hyper's `Server` on 127.0.0.1:P,
//! HTTP/1.1 only, keep-alive, `http1_pipeline_flush` (answers to pipelined requests
//! leave in one write), a `service_fn` matching on method and path:
//!   GET|POST /baseline11?a=&b=  → a+b (+ the integer body for POST), text/plain
//!   GET /pipeline               → ok, text/plain
//!   GET /json/{count}?m=        → {"items":[...],"count":n}, application/json
//!   POST /upload                → the count of body bytes read (streamed), text/plain
//!   GET /baseline2?a=&b=        → a+b, text/plain (the HTTP/2 profiles)
//! anything else 404. --h2c-port Q: a second hyper `Server` on 127.0.0.1:Q with
//! `http2_only(true)`: cleartext HTTP/2 by prior knowledge only (baseline-h2c, json-h2c;
//! anything that does not start with the HTTP/2 preface is closed), the same routes.
//! SIGTERM (or SIGINT): graceful shutdown, exit 0 within 2 s.

mod dataset;

use dataset::Item;
use hyper::body::HttpBody;
use hyper::header::{HeaderValue, CONTENT_TYPE, SERVER};
use hyper::server::conn::AddrIncoming;
use hyper::service::{make_service_fn, service_fn};
use hyper::{Body, Method, Request, Response, Server, StatusCode};
use std::convert::Infallible;
use std::process::exit;
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::{mpsc, oneshot};

const PROGRAM: &str = "arena-hyper";

struct Flags {
    port: u16,
    h2c_port: u16,
    threads: usize,
    data: String,
}

fn usage(why: &str) -> ! {
    eprintln!("{PROGRAM}: {why}");
    eprintln!("usage: {PROGRAM} --port P --threads W --data DIR [--h2c-port Q]");
    exit(2)
}

fn parse_flags() -> Flags {
    let (mut port, mut threads, mut data, mut tls_port, mut h2c_port) = (None, None, None, 0u16, 0u16);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (flag, None),
        };
        let value = inline.or_else(|| args.next()).unwrap_or_else(|| usage(&format!("{name} takes a value")));
        match name.as_str() {
            "--port" => port = Some(value.parse::<u16>().unwrap_or_else(|_| usage("bad --port"))),
            "--threads" => threads = Some(value.parse::<usize>().unwrap_or_else(|_| usage("bad --threads"))),
            "--data" => data = Some(value),
            "--h2c-port" => h2c_port = value.parse().unwrap_or_else(|_| usage("bad --h2c-port")),
            "--tls-port" => tls_port = value.parse().unwrap_or_else(|_| usage("bad --tls-port")),
            "--tls-cert" | "--tls-key" => {}
            other => usage(&format!("unknown flag {other}")),
        }
    }
    if tls_port != 0 {
        // No TLS crate (rustls, native-tls) in Debian's registry: json-tls is not served.
        usage("TLS is not supported by this peer (json-tls is not among its profiles)");
    }
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if threads == 0 {
        usage("--threads must be at least 1");
    }
    Flags { port: port.unwrap_or_else(|| usage("--port is required")), h2c_port, threads, data: data.unwrap_or_else(|| usage("--data is required")) }
}

fn reply(status: StatusCode, content_type: &'static str, body: impl Into<Body>) -> Response<Body> {
    let mut r = Response::new(body.into());
    *r.status_mut() = status;
    r.headers_mut().insert(SERVER, HeaderValue::from_static("hyper"));
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

fn text(body: impl Into<Body>) -> Response<Body> {
    reply(StatusCode::OK, "text/plain", body)
}

fn status(code: StatusCode) -> Response<Body> {
    reply(code, "text/plain", code.canonical_reason().unwrap_or(""))
}

/// The value of `key` in the query string, if present.
fn query_param<'q>(query: Option<&'q str>, key: &str) -> Option<&'q str> {
    query?.split('&').find_map(|kv| match kv.split_once('=') {
        Some((k, v)) if k == key => Some(v),
        None if kv == key => Some(""),
        _ => None,
    })
}

/// An integer query parameter: absent → `default`, present but not an integer → Err.
fn int_param(query: Option<&str>, key: &str, default: i64) -> Result<i64, ()> {
    match query_param(query, key) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|_| ()),
    }
}

async fn baseline(req: Request<Body>) -> Result<Response<Body>, hyper::Error> {
    let query = req.uri().query();
    let (a, b) = match (int_param(query, "a", 0), int_param(query, "b", 0)) {
        (Ok(a), Ok(b)) => (a, b),
        _ => return Ok(status(StatusCode::BAD_REQUEST)),
    };
    let mut sum = a.checked_add(b);
    if req.method() == Method::POST {
        // hyper decodes Content-Length and chunked framing; the body is a small integer.
        let body = hyper::body::to_bytes(req.into_body()).await?;
        let n = match std::str::from_utf8(&body).map(str::trim) {
            Ok("") => Some(0),
            Ok(s) => s.parse::<i64>().ok(),
            Err(_) => None,
        };
        sum = match n {
            Some(n) => sum.and_then(|s| s.checked_add(n)),
            None => None,
        };
    }
    Ok(match sum {
        Some(s) => text(s.to_string()),
        None => status(StatusCode::BAD_REQUEST),
    })
}

async fn baseline2(req: Request<Body>) -> Result<Response<Body>, hyper::Error> {
    let query = req.uri().query();
    Ok(match (int_param(query, "a", 0), int_param(query, "b", 0)) {
        (Ok(a), Ok(b)) => match a.checked_add(b) {
            Some(s) => text(s.to_string()),
            None => status(StatusCode::BAD_REQUEST),
        },
        _ => status(StatusCode::BAD_REQUEST),
    })
}

fn json(items: &[Item], count: &str, query: Option<&str>) -> Response<Body> {
    if count.is_empty() || !count.bytes().all(|c| c.is_ascii_digit()) {
        return status(StatusCode::NOT_FOUND);
    }
    let m = match int_param(query, "m", 1) {
        Ok(m) => m,
        Err(()) => return status(StatusCode::BAD_REQUEST),
    };
    // Clamped to 1..50 and to the dataset's length; digits too many for u64 clamp to 50.
    let n = count.parse::<u64>().unwrap_or(u64::MAX).clamp(1, 50).min(items.len() as u64) as usize;
    reply(StatusCode::OK, "application/json", dataset::render(&items[..n], m))
}

async fn upload(req: Request<Body>) -> Result<Response<Body>, hyper::Error> {
    // Streamed: each chunk is counted and dropped (hyper sends 100 Continue, when the
    // client asked for it, at the first poll of the body).
    let mut body = req.into_body();
    let mut bytes: u64 = 0;
    while let Some(chunk) = body.data().await {
        bytes += chunk?.len() as u64;
    }
    Ok(text(bytes.to_string()))
}

async fn route(items: Arc<Vec<Item>>, req: Request<Body>) -> Result<Response<Body>, hyper::Error> {
    let path = req.uri().path();
    match (req.method(), path) {
        (&Method::GET | &Method::POST, "/baseline11") => baseline(req).await,
        (&Method::GET, "/pipeline") => Ok(text("ok")),
        (&Method::GET, "/baseline2") => baseline2(req).await,
        (&Method::POST, "/upload") => upload(req).await,
        (&Method::GET, p) if p.starts_with("/json/") => Ok(json(&items, &p[6..], req.uri().query())),
        _ => Ok(status(StatusCode::NOT_FOUND)),
    }
}

enum Event {
    Signal,
    ServerEnded(Result<(), hyper::Error>),
}

/// A listener on 127.0.0.1:port with a listen backlog of 4,096 (the suite opens up to
/// thousands of connections at once; std's bind would listen with 128, Tokio's with
/// 1,024), TCP_NODELAY on accepted connections.
fn listen(port: u16) -> Result<AddrIncoming, String> {
    let listener = (|| {
        let sock = tokio::net::TcpSocket::new_v4()?;
        sock.set_reuseaddr(true)?;
        sock.bind(std::net::SocketAddr::from(([127, 0, 0, 1], port)))?;
        sock.listen(4096)
    })()
    .map_err(|e| format!("127.0.0.1:{port}: {e}"))?;
    let mut incoming = AddrIncoming::from_listener(listener).map_err(|e| e.to_string())?;
    incoming.set_nodelay(true);
    Ok(incoming)
}

async fn run(flags: Flags, items: Arc<Vec<Item>>) -> i32 {
    let incoming = match listen(flags.port) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("{PROGRAM}: {e}");
            return 1;
        }
    };
    let incoming_h2c = match flags.h2c_port {
        0 => None,
        port => match listen(port) {
            Ok(i) => Some(i),
            Err(e) => {
                eprintln!("{PROGRAM}: {e}");
                return 1;
            }
        },
    };

    let (events, mut event) = mpsc::channel::<Event>(4);
    for kind in [SignalKind::terminate(), SignalKind::interrupt()] {
        let mut sig = match signal(kind) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{PROGRAM}: signal handler: {e}");
                return 1;
            }
        };
        let events = events.clone();
        tokio::spawn(async move {
            sig.recv().await;
            let _ = events.send(Event::Signal).await;
        });
    }

    let (stop, stopped) = oneshot::channel::<()>();
    let (stop_h2c, stopped_h2c) = oneshot::channel::<()>();
    let items_h2c = items.clone();
    let make = make_service_fn(move |_| {
        let items = items.clone();
        async move { Ok::<_, Infallible>(service_fn(move |req| route(items.clone(), req))) }
    });
    let h2c = incoming_h2c.map(|incoming| {
        // hyper's HTTP/2 server with its defaults, prior knowledge only.
        let make = make_service_fn(move |_| {
            let items = items_h2c.clone();
            async move { Ok::<_, Infallible>(service_fn(move |req| route(items.clone(), req))) }
        });
        let server = Server::builder(incoming).http2_only(true).serve(make).with_graceful_shutdown(async {
            let _ = stopped_h2c.await;
        });
        let events = events.clone();
        tokio::spawn(async move {
            let r = server.await;
            let _ = events.send(Event::ServerEnded(r)).await;
        })
    });
    let server = Server::builder(incoming)
        .http1_only(true)
        .http1_keepalive(true)
        .http1_pipeline_flush(true)
        .serve(make)
        .with_graceful_shutdown(async {
            let _ = stopped.await;
        });
    let server = tokio::spawn(async move {
        let r = server.await;
        let _ = events.send(Event::ServerEnded(r)).await;
    });

    match event.recv().await {
        Some(Event::Signal) => {
            // Graceful: hyper stops accepting, closes idle keep-alive connections and
            // lets requests in progress finish; whatever is still open after 1.2 s
            // (a client that never sends its body) is dropped with the runtime.
            let _ = stop.send(());
            let _ = stop_h2c.send(());
            let _ = tokio::time::timeout(Duration::from_millis(1200), async move {
                let _ = server.await;
                if let Some(h) = h2c {
                    let _ = h.await;
                }
            })
            .await;
            0
        }
        Some(Event::ServerEnded(Err(e))) => {
            eprintln!("{PROGRAM}: {e}");
            1
        }
        Some(Event::ServerEnded(Ok(()))) | None => 0,
    }
}

fn main() {
    let flags = parse_flags();
    let path = std::path::Path::new(&flags.data).join("dataset.json");
    let items = match std::fs::read_to_string(&path).map_err(|e| e.to_string()).and_then(|t| dataset::parse(&t)) {
        Ok(items) if !items.is_empty() => Arc::new(items),
        Ok(_) => {
            eprintln!("{PROGRAM}: {}: no items", path.display());
            exit(1);
        }
        Err(e) => {
            eprintln!("{PROGRAM}: {}: {e}", path.display());
            exit(1);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(flags.threads)
        .enable_all()
        .build()
        .expect("tokio runtime");
    // The server runs as tasks on the W workers; block_on's thread only waits for
    // the signal (or the server's end).
    let code = rt.block_on(run(flags, items));
    rt.shutdown_timeout(Duration::from_millis(300));
    exit(code);
}
