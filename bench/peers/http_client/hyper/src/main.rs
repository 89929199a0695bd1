//! http_client-hyper: the `http-client` suite's hyper peer (README.md). C tokio tasks
//! loop `client.get(uri)` on one shared `hyper::Client` (HTTP/1.1, its keep-alive pool,
//! pool_max_idle_per_host = C) on a multi-thread runtime of T workers, for D seconds;
//! every answer is checked (status 200, the exact body read with hyper::body::to_bytes),
//! anything else is an error. Prints the suite's JSON line with the process's user+sys
//! CPU over the measured window (getrusage RUSAGE_SELF).
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[repr(C)]
struct Timeval {
    sec: i64,
    usec: i64,
}
#[repr(C)]
struct Rusage {
    utime: Timeval,
    stime: Timeval,
    rest: [i64; 14],
}
extern "C" {
    fn getrusage(who: i32, usage: *mut Rusage) -> i32;
}
fn cpu() -> (f64, f64) {
    let mut u = Rusage { utime: Timeval { sec: 0, usec: 0 }, stime: Timeval { sec: 0, usec: 0 }, rest: [0; 14] };
    unsafe { getrusage(0, &mut u) };
    (u.utime.sec as f64 + u.utime.usec as f64 / 1e6, u.stime.sec as f64 + u.stime.usec as f64 / 1e6)
}

fn usage() -> ! {
    eprintln!("usage: http_client-hyper --url U [--concurrency C] [--duration-s D] [--threads T] [--body TEXT]");
    std::process::exit(2)
}

fn main() {
    let mut url = String::new();
    let mut conc: usize = 64;
    let mut dur: f64 = 5.0;
    let mut threads: usize = 2;
    let mut want = String::from("Hello, World!");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        if i + 1 >= args.len() {
            usage();
        }
        let v = &args[i + 1];
        match args[i].as_str() {
            "--url" => url = v.clone(),
            "--concurrency" => conc = v.parse().unwrap_or_else(|_| usage()),
            "--duration-s" => dur = v.parse().unwrap_or_else(|_| usage()),
            "--threads" => threads = v.parse().unwrap_or_else(|_| usage()),
            "--body" => want = v.clone(),
            _ => usage(),
        }
        i += 2;
    }
    if url.is_empty() || conc == 0 || dur <= 0.0 || threads == 0 {
        usage();
    }
    let uri: hyper::Uri = url.parse().unwrap_or_else(|_| usage());
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(threads).enable_all().build().unwrap();
    let ok = Arc::new(AtomicU64::new(0));
    let bad = Arc::new(AtomicU64::new(0));
    let want = Arc::new(want.into_bytes());
    let (u0, s0) = cpu();
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs_f64(dur);
    rt.block_on(async {
        let client = hyper::Client::builder()
            .pool_max_idle_per_host(conc)
            .pool_idle_timeout(Duration::from_secs(30))
            .build_http::<hyper::Body>();
        let mut handles = Vec::with_capacity(conc);
        for _ in 0..conc {
            let (client, uri, ok, bad, want) = (client.clone(), uri.clone(), ok.clone(), bad.clone(), want.clone());
            handles.push(tokio::spawn(async move {
                let (mut n, mut e) = (0u64, 0u64);
                while Instant::now() < end {
                    let good = match client.get(uri.clone()).await {
                        Ok(resp) => {
                            let status = resp.status();
                            match hyper::body::to_bytes(resp.into_body()).await {
                                Ok(b) => status == 200 && b.as_ref() == want.as_slice(),
                                Err(_) => false,
                            }
                        }
                        Err(err) => {
                            if e < 3 {
                                eprintln!("http_client-hyper: {err}");
                            }
                            false
                        }
                    };
                    if good {
                        n += 1;
                    } else {
                        e += 1;
                    }
                }
                ok.fetch_add(n, Ordering::Relaxed);
                bad.fetch_add(e, Ordering::Relaxed);
            }));
        }
        for h in handles {
            h.await.unwrap();
        }
    });
    let wall = t0.elapsed().as_secs_f64();
    let (u1, s1) = cpu();
    let (n, e) = (ok.load(Ordering::Relaxed), bad.load(Ordering::Relaxed));
    let per = if n > 0 { (u1 - u0 + s1 - s0) * 1e6 / n as f64 } else { 0.0 };
    println!(
        "{{\"suite\":\"http-client\",\"scenario\":\"get_keepalive_{conc}\",\"runtime\":\"hyper\",\"threads\":{threads},\
         \"concurrency\":{conc},\"requests\":{n},\"errors\":{e},\"wall_s\":{wall:.3},\"ops_per_sec\":{:.0},\
         \"cpu_user_s\":{:.3},\"cpu_sys_s\":{:.3},\"cpu_us_per_req\":{per:.3}}}",
        n as f64 / wall,
        u1 - u0,
        s1 - s0
    );
    drop(rt);
    if e != 0 || n == 0 {
        std::process::exit(1);
    }
}
