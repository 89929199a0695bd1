//! Memory probes: peak RSS (getrusage) and current RSS (/proc/self/statm).

/// Peak resident set size of this process, KiB (`getrusage(RUSAGE_SELF).ru_maxrss`).
pub fn peak_rss_kib() -> u64 {
    // SAFETY: rusage is plain data; getrusage fills it.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru.ru_maxrss as u64
    }
}

/// Resident set size now, bytes: /proc/self/statm's second field × the page size.
pub fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("read /proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|f| f.parse().ok())
        .expect("/proc/self/statm has a resident field");
    // SAFETY: sysconf has no preconditions.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64
}
