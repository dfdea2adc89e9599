//! How much memory a run may use: `--memory-limit`, or a default taken from
//! the machine or container, so that a user who sets nothing meets a
//! spilling query engine rather than the OOM killer.
//!
//! The limit is the process's budget. DataFusion's memory pool gets a share
//! of it ([`sql_pool_bytes`]): its operators account for their big buffers
//! only (sort runs, hash tables, aggregation state), and the Rust parts of a
//! stage (readers, writers' row groups, verification's texts) live beside
//! it; the pool is a fair spill pool, so concurrent sorts and aggregations
//! each get their share and spill instead of one taking it all.

/// Where a run's memory limit came from, for the line printed at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitSource {
    /// `--memory-limit`.
    CommandLine,
    /// The container's cgroup limit (`memory.max`).
    Cgroup,
    /// The machine's memory (`MemTotal`).
    Machine,
}

/// Share of the container's or machine's memory a run takes by default:
/// room for the page cache that reading the crawl and the tables needs,
/// and for other processes.
const DEFAULT_SHARE: f64 = 0.75;

/// The share of the limit that DataFusion's pool gets (see the module doc).
const SQL_SHARE: f64 = 0.5;

/// The least `--memory-limit` a run takes: 64 MiB, the smallest limit the
/// test suite runs every stage of the sample under (`tests/pipeline.rs`,
/// one thread). Half of it is the SQL pool ([`SQL_SHARE`]): the sample's
/// `candidates` query, whose ten or so sorts each reserve room for their
/// final merge (`tables::sql`), runs in it, and the corpus passes of
/// `tokens` and `boilerplate` take at least 64 MiB whatever the limit
/// (`tables::sql::CORPUS_PASS_BYTES`). The other half holds what lives
/// beside the pool: the table writers' row groups and the stage's readers.
/// Far below it (1 MiB, 8 MiB) a run failed in its first SQL stage with
/// "resources exhausted" after the map stages had run, so a smaller limit
/// is refused before any stage runs. A bigger crawl needs more: the
/// minimum only says when no crawl can run.
pub const MIN_RUN_BYTES: usize = 64 << 20;

/// A given limit below [`MIN_RUN_BYTES`], as the message of a usage error
/// naming the minimum; `None` for one a run can work in.
pub fn too_small(bytes: usize) -> Option<String> {
    (bytes < MIN_RUN_BYTES).then(|| {
        format!(
            "--memory-limit {}: a run needs at least {} (64M): half is the SQL engine's pool, the rest its readers \
             and writers",
            human_bytes(bytes),
            human_bytes(MIN_RUN_BYTES)
        )
    })
}

/// A run's memory limit and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLimit {
    pub bytes: usize,
    pub source: LimitSource,
}

/// What a DataFusion session gets of a run's limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlMemory {
    /// The size of its memory pool.
    pub pool_bytes: usize,
    /// Plan joins as sort-merge joins, which spill, instead of hash joins,
    /// whose build side must fit in the pool. Chosen when the user gave the
    /// limit: it is then meant to hold at any size, and sort-merge joins
    /// cost more CPU (the Javadoc crawl's candidates: 23.9 CPU-s against
    /// 13.6). Under the default limit, hash joins stay; the pool still
    /// bounds them, and a run that outgrows it stops with "resources
    /// exhausted" (then give --memory-limit) rather than meeting the OOM
    /// killer.
    pub sort_merge_joins: bool,
}

impl RunLimit {
    /// The share of this limit a DataFusion session gets.
    pub fn sql(&self) -> SqlMemory {
        SqlMemory { pool_bytes: sql_pool_bytes(self.bytes), sort_merge_joins: self.source == LimitSource::CommandLine }
    }
}

impl std::fmt::Display for RunLimit {
    /// The line printed at the start of a run: the limit and where it came
    /// from.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&describe(self.bytes, self.source))
    }
}

/// The memory limit of a run: the one given, else [`DEFAULT_SHARE`] of the
/// cgroup limit or, without one, of the machine's memory; `None` when
/// neither can be read (not Linux).
pub fn run_limit(given: Option<usize>) -> Option<RunLimit> {
    if let Some(bytes) = given {
        return Some(RunLimit { bytes, source: LimitSource::CommandLine });
    }
    let machine = machine_bytes();
    let cgroup = cgroup_bytes().filter(|&c| machine.is_none_or(|m| c < m));
    let (bytes, source) = match (cgroup, machine) {
        (Some(c), _) => (c, LimitSource::Cgroup),
        (None, Some(m)) => (m, LimitSource::Machine),
        (None, None) => return None,
    };
    Some(RunLimit { bytes: (bytes as f64 * DEFAULT_SHARE) as usize, source })
}

/// The bytes of DataFusion's pool under a run limit of `limit` bytes.
fn sql_pool_bytes(limit: usize) -> usize {
    (limit as f64 * SQL_SHARE) as usize
}

/// Caps glibc's malloc arenas at `threads`, once, before the thread pools
/// start. glibc gives a thread that meets a locked arena one of its own, up
/// to eight per core, and memory freed in one arena serves only that arena:
/// the pools' batches, allocated on one thread and freed on another, left
/// each arena holding its own peak (the min-hash-only run on Javadoc: the
/// `tokens` stage's heap peaked at 158 MB under a resident size of 348 MB,
/// 262 MB with the arenas capped; the whole run's peak went 566 → 397 MB,
/// CPU within noise on one and on two threads).
pub fn cap_malloc_arenas(threads: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a malloc parameter; it is called before
    // the pools' threads exist.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, threads.clamp(1, 64) as libc::c_int);
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = threads;
}

/// Gives the memory malloc holds free back to the system: between stages,
/// so that a stage's peak does not stay resident through the next ones of
/// the same process (glibc returns only the top of its heap by itself).
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// What to do about a stage that failed for want of memory (DataFusion's
/// "Resources exhausted", or a sort that cannot spill any further), under
/// the run's `limit`; `None` for any other error. The engine's own message
/// names its configuration keys (`datafusion.runtime.memory_limit`), which
/// a user of this program does not set.
pub fn exhausted_hint(error: &anyhow::Error, limit: Option<RunLimit>) -> Option<String> {
    let text = format!("{error:#}");
    if !(text.contains("Resources exhausted") || text.contains("Not enough memory to continue")) {
        return None;
    }
    Some(match limit {
        Some(limit) => format!(
            "out of memory under the memory limit of {} ({} for the SQL engine): rerun with a larger \
             --memory-limit (docs/usage.md gives what crawls of some sizes need)",
            human_bytes(limit.bytes),
            human_bytes(sql_pool_bytes(limit.bytes))
        ),
        None => "out of memory: rerun with --memory-limit".to_string(),
    })
}

/// Starts a new peak of this process's resident memory, so that the peak
/// read after a stage ([`resident_peak_bytes`]) is that stage's own: the
/// stages of a run share one process, and its lifetime peak would hide
/// which stage needed the memory. Writes 5 to `/proc/self/clear_refs`
/// (Linux 4.0 and later); where that cannot be done, the peak read is the
/// process's since it started.
pub fn start_resident_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The peak resident memory of this process since [`start_resident_peak`]
/// (`VmHWM` of `/proc/self/status`), in bytes: what `--memory-limit` is set
/// against. `None` where that is not available.
pub fn resident_peak_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// See [`RunLimit`]'s `Display`.
fn describe(limit: usize, source: LimitSource) -> String {
    let origin = match source {
        LimitSource::CommandLine => "--memory-limit".to_string(),
        LimitSource::Cgroup => format!("{:.0}% of the container's memory.max", DEFAULT_SHARE * 100.0),
        LimitSource::Machine => {
            format!("{:.0}% of this machine's memory; set --memory-limit to change it", DEFAULT_SHARE * 100.0)
        }
    };
    format!(
        "memory limit {} ({origin}); the SQL engine spills beyond {}",
        human_bytes(limit),
        human_bytes(sql_pool_bytes(limit))
    )
}

/// `bytes` in binary units, one decimal (`1.5 GiB`).
pub fn human_bytes(bytes: usize) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", units[unit])
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn machine_bytes() -> Option<usize> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo_total(&info)
}

fn parse_meminfo_total(info: &str) -> Option<usize> {
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The memory limit of this process's cgroup: v2's `memory.max` of its own
/// cgroup (from `/proc/self/cgroup`), else v1's `memory.limit_in_bytes`;
/// `None` when unlimited or unreadable.
fn cgroup_bytes() -> Option<usize> {
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|text| text.lines().find_map(|l| l.strip_prefix("0::").map(|p| p.trim().to_string())));
    let mut candidates = Vec::new();
    if let Some(path) = own {
        candidates.push(format!("/sys/fs/cgroup{}/memory.max", path.trim_end_matches('/')));
    }
    candidates.push("/sys/fs/cgroup/memory.max".into());
    candidates.push("/sys/fs/cgroup/memory/memory.limit_in_bytes".into());
    candidates.iter().find_map(|p| parse_cgroup_limit(&std::fs::read_to_string(p).ok()?))
}

/// A cgroup limit file's value: bytes, or `None` for `max` and for v1's
/// "unlimited" (a number near the address space).
fn parse_cgroup_limit(text: &str) -> Option<usize> {
    let bytes: u64 = text.trim().parse().ok()?;
    (bytes < 1 << 60).then_some(bytes as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_out_of_memory_is_told_to_raise_the_limit() {
        let limit = Some(RunLimit { bytes: 128 << 20, source: LimitSource::CommandLine });
        let exhausted = anyhow::Error::new(datafusion::error::DataFusionError::ResourcesExhausted(
            "Failed to allocate additional 3.9 MB for ExternalSorter[1]".into(),
        ))
        .context("Not enough memory to continue external sort");
        let hint = exhausted_hint(&exhausted, limit).unwrap();
        assert!(hint.starts_with("out of memory under the memory limit of 128.0 MiB (64.0 MiB for the SQL engine)"));
        assert!(hint.contains("rerun with a larger --memory-limit"), "{hint}");
        assert_eq!(exhausted_hint(&anyhow::anyhow!("No field named nosuch"), limit), None);
    }

    #[test]
    fn limits_come_from_the_command_line_cgroup_or_machine() {
        let given = run_limit(Some(1 << 30)).unwrap();
        assert_eq!(given, RunLimit { bytes: 1 << 30, source: LimitSource::CommandLine });
        assert_eq!(given.sql(), SqlMemory { pool_bytes: 1 << 29, sort_merge_joins: true });
        assert_eq!(parse_cgroup_limit("max\n"), None);
        assert_eq!(parse_cgroup_limit("9223372036854771712\n"), None);
        assert_eq!(parse_cgroup_limit("2147483648\n"), Some(2 << 30));
        let info = "MemTotal:       24570040 kB\nMemFree:        1 kB\n";
        assert_eq!(parse_meminfo_total(info), Some(24_570_040 * 1024));
        // On Linux a default exists, below the machine's memory.
        if let Some(machine) = machine_bytes() {
            let default = run_limit(None).unwrap();
            assert!(default.bytes < machine && default.bytes > 0);
            assert!(!default.sql().sort_merge_joins);
        }
        assert_eq!(human_bytes(1536 << 20), "1.5 GiB");
        // 1M and 8M are refused, naming the minimum; 64M is enough.
        for small in [1 << 20, 8 << 20, (64 << 20) - 1] {
            assert!(too_small(small).is_some_and(|m| m.contains("at least 64.0 MiB")), "{small}");
        }
        assert_eq!(too_small(64 << 20), None);
        assert!(describe(2 << 30, LimitSource::CommandLine).contains("2.0 GiB (--memory-limit)"));
    }
}
