//! Command-line flags: the benchmark programs' `--threads N --samples N --warmup N
//! --scenario A,B` (plus program-specific `--key value` pairs and positional
//! arguments), and the servers' `--port P [--threads W]`.

use std::process::exit;

/// The common flags of docs/workloads.md ("Common flags").
#[derive(Debug, Clone)]
pub struct Flags {
    /// Worker threads; default: the CPUs in this process's affinity mask.
    pub threads: usize,
    /// Measured samples (default 5).
    pub samples: usize,
    /// Unmeasured samples run first (default 1).
    pub warmup: usize,
    /// `--scenario` list; `None` runs every scenario.
    scenarios: Option<Vec<String>>,
    /// Other `--key value` pairs, in order.
    pub other: Vec<(String, String)>,
    /// Arguments that are not flags.
    pub positional: Vec<String>,
}

fn bad_usage(program: &str, why: &str) -> ! {
    eprintln!("{program}: {why}");
    eprintln!(
        "usage: {program} [--threads N] [--samples N] [--warmup N] [--scenario NAME[,NAME]]"
    );
    exit(2)
}

fn number(program: &str, flag: &str, value: Option<String>) -> usize {
    value
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| bad_usage(program, &format!("{flag} takes a whole number")))
}

impl Flags {
    /// Parses `std::env::args()`; `--flag value` and `--flag=value` both work.
    /// Exits 2 with a usage line on bad input.
    pub fn parse(program: &str) -> Flags {
        let mut f = Flags {
            threads: affinity_cpus(),
            samples: 5,
            warmup: 1,
            scenarios: None,
            other: Vec::new(),
            positional: Vec::new(),
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            if !arg.starts_with("--") {
                f.positional.push(arg);
                continue;
            }
            let (name, inline) = match arg.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (arg, None),
            };
            let value = inline.or_else(|| args.next());
            match name.as_str() {
                "--threads" => f.threads = number(program, "--threads", value),
                "--samples" => f.samples = number(program, "--samples", value),
                "--warmup" => f.warmup = number(program, "--warmup", value),
                "--scenario" => {
                    let v = value.unwrap_or_else(|| bad_usage(program, "--scenario takes names"));
                    f.scenarios = Some(v.split(',').map(|s| s.trim().to_string()).collect());
                }
                other => {
                    let v = value.unwrap_or_else(|| bad_usage(program, &format!("{other} takes a value")));
                    f.other.push((other[2..].to_string(), v));
                }
            }
        }
        if f.threads == 0 || f.samples == 0 {
            bad_usage(program, "--threads and --samples must be at least 1");
        }
        f
    }

    /// True when `name` was asked for (or no `--scenario` was given, or `all`).
    pub fn wants(&self, name: &str) -> bool {
        match &self.scenarios {
            None => true,
            Some(list) => list.iter().any(|s| s == name || s == "all"),
        }
    }

    /// Exits 2 when `--scenario` names something not in `known`.
    pub fn check_scenarios(&self, program: &str, known: &[&str]) {
        for s in self.scenarios.iter().flatten() {
            if s != "all" && !known.contains(&s.as_str()) {
                bad_usage(program, &format!("unknown scenario {s} (known: {})", known.join(",")));
            }
        }
    }

    /// The value of a program-specific `--key value` (the last one given).
    pub fn other(&self, key: &str) -> Option<&str> {
        self.other.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// The servers' flags: `--port P [--threads W]`.
#[derive(Debug, Clone, Copy)]
pub struct ServerFlags {
    pub port: u16,
    pub threads: usize,
}

impl ServerFlags {
    /// Parses `--port P [--threads W]` (W defaults to the affinity mask's CPUs).
    pub fn parse(program: &str) -> ServerFlags {
        let usage = || -> ! {
            eprintln!("usage: {program} --port P [--threads W]");
            exit(2)
        };
        let mut port = None;
        let mut threads = affinity_cpus();
        let mut args = std::env::args().skip(1);
        while let Some(flag) = args.next() {
            let value = args.next().unwrap_or_else(|| usage());
            match flag.as_str() {
                "--port" => port = Some(value.parse::<u16>().unwrap_or_else(|_| usage())),
                "--threads" => threads = value.parse().unwrap_or_else(|_| usage()),
                _ => usage(),
            }
        }
        if threads == 0 {
            usage();
        }
        ServerFlags { port: port.unwrap_or_else(|| usage()), threads }
    }
}

/// CPUs this process may run on (`sched_getaffinity`), at least 1.
pub fn affinity_cpus() -> usize {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            return (libc::CPU_COUNT(&set) as usize).max(1);
        }
    }
    1
}
