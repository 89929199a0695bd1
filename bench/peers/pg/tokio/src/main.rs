//! pg-tokio: the pg suite's tokio-postgres peer (docs/workloads.md, "pg";
//! bench/peers/pg/README.md). One `tokio_postgres::Client` (its `Connection` spawned as a
//! task, as tokio-postgres's docs do) on a multi-thread runtime with `--threads` workers:
//!   roundtrip      10,000 `client.query_one(&stmt, &[&id]).await`, one after the other
//!   pipelined_10k  the same 10,000 futures joined at once (`try_join_all`): tokio-postgres
//!                  sends every request before the first answer comes back
//!   fetch_100k     `client.query(&stmt, &[])` (100,000 rows), every column decoded
//!
//!   pg-tokio --url postgres://user:pw@127.0.0.1:P/db [--threads N] [--samples N]
//!            [--warmup N] [--scenario roundtrip,pipelined_10k,fetch_100k]

use futures_util::future::try_join_all;
use peer_common::{median, median_sample, Flags, Latencies, Line};
use std::process::exit;
use std::time::Instant;
use tokio_postgres::{Client, NoTls, Statement};

const PROGRAM: &str = "pg-tokio";
const SCENARIOS: [&str; 3] = ["roundtrip", "pipelined_10k", "fetch_100k"];
const ROUNDTRIP_QUERIES: usize = 10_000;
const PIPELINED_QUERIES: usize = 10_000;
const FETCH_ROWS: usize = 100_000;
const POINT_SQL: &str = "SELECT id, name, price FROM items WHERE id = $1";
const FETCH_SQL: &str = "SELECT id, name, category, price, quantity, active, rating_score, rating_count \
                         FROM items WHERE id <= 100000";

/// The id of query k of a sample (docs/workloads.md).
fn item_id(k: usize) -> i32 {
    (1 + (k as i64 * 7919) % 100_000) as i32
}

#[derive(Default)]
struct Sample {
    wall_s: f64,
    cpu_s: f64,
    cpu_user_s: f64,
    cpu_sys_s: f64,
    checksum: i64,
    latencies_ns: Vec<u64>,
}

fn cpu_times() -> (f64, f64) {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(u.ru_utime), s(u.ru_stime))
}

struct Meter {
    t0: Instant,
    cpu0: (f64, f64),
}

impl Meter {
    fn start() -> Meter {
        Meter { cpu0: cpu_times(), t0: Instant::now() }
    }
    fn stop(&self, s: &mut Sample) {
        s.wall_s = self.t0.elapsed().as_secs_f64();
        let (u, y) = cpu_times();
        s.cpu_user_s = u - self.cpu0.0;
        s.cpu_sys_s = y - self.cpu0.1;
        s.cpu_s = s.cpu_user_s + s.cpu_sys_s;
    }
}

fn point_sum(row: &tokio_postgres::Row, want: i32) -> Result<i64, String> {
    let id: i32 = row.try_get(0).map_err(|e| e.to_string())?;
    let name: &str = row.try_get(1).map_err(|e| e.to_string())?;
    let price: i32 = row.try_get(2).map_err(|e| e.to_string())?;
    if id != want {
        return Err(format!("asked for id {want}, got {id}"));
    }
    Ok(id as i64 + price as i64 + name.len() as i64)
}

async fn roundtrip(c: &Client, st: &Statement, s: &mut Sample) -> Result<(), String> {
    s.latencies_ns.reserve(ROUNDTRIP_QUERIES);
    let m = Meter::start();
    for k in 0..ROUNDTRIP_QUERIES {
        let id = item_id(k);
        let t0 = Instant::now();
        let row = c.query_one(st, &[&id]).await.map_err(|e| e.to_string())?;
        s.latencies_ns.push(t0.elapsed().as_nanos() as u64);
        s.checksum += point_sum(&row, id)?;
    }
    m.stop(s);
    Ok(())
}

async fn pipelined(c: &Client, st: &Statement, s: &mut Sample) -> Result<(), String> {
    let m = Meter::start();
    let ids: Vec<i32> = (0..PIPELINED_QUERIES).map(item_id).collect();
    let rows = try_join_all(ids.iter().map(|id| async move { c.query_one(st, &[id]).await }))
        .await
        .map_err(|e| e.to_string())?;
    for (row, id) in rows.iter().zip(&ids) {
        s.checksum += point_sum(row, *id)?;
    }
    m.stop(s);
    Ok(())
}

async fn fetch(c: &Client, st: &Statement, s: &mut Sample) -> Result<(), String> {
    let m = Meter::start();
    let rows = c.query(st, &[]).await.map_err(|e| e.to_string())?;
    if rows.len() != FETCH_ROWS {
        return Err(format!("{} rows, want {FETCH_ROWS}", rows.len()));
    }
    for row in &rows {
        let g = |e: tokio_postgres::Error| e.to_string();
        let id: i32 = row.try_get(0).map_err(g)?;
        let name: &str = row.try_get(1).map_err(g)?;
        let category: &str = row.try_get(2).map_err(g)?;
        let price: i32 = row.try_get(3).map_err(g)?;
        let quantity: i32 = row.try_get(4).map_err(g)?;
        let active: bool = row.try_get(5).map_err(g)?;
        let score: i32 = row.try_get(6).map_err(g)?;
        let count: i32 = row.try_get(7).map_err(g)?;
        s.checksum += id as i64 + price as i64 + quantity as i64 + score as i64 + count as i64
            + name.len() as i64 + category.len() as i64 + active as i64;
    }
    m.stop(s);
    Ok(())
}

fn report(name: &str, threads: usize, per_sample: usize, got: &[Sample]) {
    let rates: Vec<f64> = got.iter().map(|s| per_sample as f64 / s.wall_s).collect();
    let mid = &got[median_sample(&rates)];
    let total = (per_sample * got.len()) as f64;
    let cpu: f64 = got.iter().map(|s| s.cpu_s).sum();
    let mut l = Line::new()
        .s("suite", "pg")
        .s("scenario", name)
        .s("runtime", "tokio")
        .i("threads", threads as u64)
        .i("samples", got.len() as u64)
        .f("wall_s", mid.wall_s, 6);
    if name == "fetch_100k" {
        l = l.i("queries", 1).i("rows", per_sample as u64).f("rows_per_sec", median(&rates), 1);
        l = l.f("cpu_ns_per_row", cpu * 1e9 / total, 3);
    } else {
        l = l.i("queries", per_sample as u64).i("rows", per_sample as u64);
        l = l.f("ops_per_sec", median(&rates), 1).f("cpu_us_per_query", cpu * 1e6 / total, 4);
    }
    l = l
        .f("cpu_user_s", got.iter().map(|s| s.cpu_user_s).sum(), 6)
        .f("cpu_sys_s", got.iter().map(|s| s.cpu_sys_s).sum(), 6);
    if !mid.latencies_ns.is_empty() {
        let lat = Latencies::of_ns(mid.latencies_ns.clone());
        l = l.f("p50_us", lat.p50_us, 3).f("p99_us", lat.p99_us, 3);
    }
    l.i("checksum", mid.checksum as u64).print();
}

async fn run(url: &str, f: &Flags) -> Result<(), String> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.map_err(|e| format!("connect: {e}"))?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            eprintln!("{PROGRAM}: connection: {e}");
        }
    });
    let point = client.prepare(POINT_SQL).await.map_err(|e| e.to_string())?;
    let all = client.prepare(FETCH_SQL).await.map_err(|e| e.to_string())?;
    for name in SCENARIOS {
        if !f.wants(name) {
            continue;
        }
        let mut got = Vec::new();
        let mut reference = None;
        for i in 0..f.warmup + f.samples {
            let mut s = Sample::default();
            let r = match name {
                "roundtrip" => roundtrip(&client, &point, &mut s).await,
                "pipelined_10k" => pipelined(&client, &point, &mut s).await,
                _ => fetch(&client, &all, &mut s).await,
            };
            r.map_err(|e| format!("{name}: {e}"))?;
            match reference {
                None => reference = Some(s.checksum),
                Some(c) if c != s.checksum => {
                    return Err(format!("{name}: checksum {} differs from the first run's {c}", s.checksum))
                }
                _ => {}
            }
            if i >= f.warmup {
                got.push(s);
            }
        }
        let per_sample = match name {
            "roundtrip" => ROUNDTRIP_QUERIES,
            "pipelined_10k" => PIPELINED_QUERIES,
            _ => FETCH_ROWS,
        };
        report(name, f.threads, per_sample, &got);
    }
    Ok(())
}

fn main() {
    let f = Flags::parse(PROGRAM);
    f.check_scenarios(PROGRAM, &SCENARIOS);
    let url = f.other("url").unwrap_or_else(|| {
        eprintln!("{PROGRAM}: --url postgres://user:pw@host:port/db is required");
        exit(2)
    }).to_string();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(f.threads)
        .enable_all()
        .build()
        .expect("tokio runtime");
    if let Err(e) = rt.block_on(run(&url, &f)) {
        eprintln!("{PROGRAM}: {e}");
        exit(1);
    }
}
