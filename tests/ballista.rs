//! The SQL stages on an Apache Ballista cluster: a scheduler and two
//! executors started as processes on loopback (`neardup-ballista`), the
//! pipeline run with `--engine ballista://127.0.0.1:PORT`, and every table
//! compared row for row with an embedded run.

#![cfg(feature = "ballista")]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{canonical_rows, run_ok, temp_dir};

/// The cluster's processes, killed when the test ends however it ends.
struct Cluster {
    nodes: Vec<Child>,
    scheduler_port: u16,
    logs: Vec<PathBuf>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            let _ = node.kill();
            let _ = node.wait();
        }
    }
}

/// Ports free right now (the OS picks them; they are released at once).
fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> = (0..n).map(|_| TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    listeners.iter().map(|l| l.local_addr().unwrap().port()).collect()
}

fn node(dir: &Path, log: &str, args: &[String]) -> (Child, PathBuf) {
    let log = dir.join(log);
    let child = Command::new(env!("CARGO_BIN_EXE_neardup-ballista"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    (child, log)
}

/// The scheduler's /readyz answer, if it answers.
fn readiness(port: u16) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(stream, "GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    Some(answer)
}

/// Starts a scheduler and two executors and waits until both executors are
/// registered.
fn start_cluster(dir: &Path) -> Cluster {
    let ports = free_ports(5);
    let (scheduler, log) = node(
        dir,
        "scheduler.log",
        &["scheduler".into(), "--port".into(), ports[0].to_string(), "--min-executors".into(), "2".into()],
    );
    let mut cluster = Cluster { nodes: vec![scheduler], scheduler_port: ports[0], logs: vec![log] };
    for (i, pair) in ports[1..].chunks(2).enumerate() {
        let (executor, log) = node(
            dir,
            &format!("executor-{i}.log"),
            &[
                "executor".into(),
                "--port".into(),
                pair[0].to_string(),
                "--grpc-port".into(),
                pair[1].to_string(),
                "--scheduler-port".into(),
                ports[0].to_string(),
                "--concurrent-tasks".into(),
                "2".into(),
                "--memory".into(),
                "1G".into(),
                "--work-dir".into(),
                dir.join(format!("executor-{i}")).display().to_string(),
            ],
        );
        cluster.nodes.push(executor);
        cluster.logs.push(log);
    }
    let started = Instant::now();
    loop {
        if readiness(cluster.scheduler_port).is_some_and(|a| a.starts_with("HTTP/1.1 200")) {
            return cluster;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "the Ballista cluster did not get ready in 60 s");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Runs the pipeline against the cluster; a run still going after 5
/// minutes (the sample takes seconds) fails the test with the scheduler's
/// last log lines instead of hanging it.
fn run_with_deadline(args: &[&str], cluster: &Cluster) {
    let mut child = common::pipeline().args(args).stderr(Stdio::piped()).spawn().unwrap();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            assert!(status.success(), "pipeline {args:?}: {status}\n{err}");
            return;
        }
        if started.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            let log = std::fs::read_to_string(&cluster.logs[0]).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(20).collect();
            panic!("pipeline {args:?} still running after 300 s; scheduler log ends:\n{}", tail.join("\n"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn manifest(out: &Path, stage: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join(format!("_manifests/{stage}.json"))).unwrap()).unwrap()
}

#[test]
fn sql_stages_on_a_ballista_cluster_give_the_embedded_tables() {
    let dir = temp_dir("ballista");
    let cluster = start_cluster(&dir);
    let engine = format!("ballista://127.0.0.1:{}", cluster.scheduler_port);

    // The README's run on the sample, shared with other tests, copied:
    // the scoring and the history below run stages in it again.
    let embedded = dir.join("embedded");
    let copied = Command::new("cp").arg("-r").arg(common::shared_sample_run()).arg(&embedded).status().unwrap();
    assert!(copied.success());
    let remote = dir.join("ballista");
    run_with_deadline(&["--quiet", "run", "--out", remote.to_str().unwrap(), "--engine", &engine], &cluster);

    let tables: Vec<String> =
        ["df", "corpus_stats", "candidates", "hot_signatures", "method_quality", "method_overlap"]
            .iter()
            .map(|s| s.to_string())
            .chain(common::table_names(&embedded))
            .collect();
    for table in &tables {
        let (a, b) = (canonical_rows(&embedded, table), canonical_rows(&remote, table));
        assert_eq!(a.len(), b.len(), "rows of table {table}");
        assert!(a == b, "table {table} differs between the embedded and the Ballista run");
    }
    assert!(!canonical_rows(&remote, "candidates").is_empty());

    // The SQL stages say where they ran, and both executors did work.
    for stage in ["boilerplate", "stats", "search_links", "candidates", "verify_pairs", "evaluate"] {
        assert_eq!(manifest(&remote, stage)["engine"], engine.as_str(), "stage {stage}");
        assert_eq!(manifest(&embedded, stage)["engine"], "embedded", "stage {stage}");
        eprintln!(
            "stage {stage}: embedded {:.2} s, Ballista {:.2} s",
            manifest(&embedded, stage)["wall_seconds"].as_f64().unwrap(),
            manifest(&remote, stage)["wall_seconds"].as_f64().unwrap()
        );
    }
    for stage in ["descr_sample", "method_state", "signatures"] {
        assert_eq!(manifest(&remote, stage)["engine"], "embedded", "{stage} runs in the pipeline's process, as tasks");
    }

    // Scoring against gold labels (joins over small tables, which stalled
    // stock Ballista 55 nodes; see src/bin/neardup_ballista.rs): labels for
    // some of the run's pairs by URL, verified ones positive.
    let labels = common::pipeline()
        .args(["--quiet", "query", "--format", "json", "--out", embedded.to_str().unwrap()])
        .arg(
            "SELECT a.url AS url_a, b.url AS url_b, CASE WHEN d.verified THEN 3 ELSE 0 END AS label \
             FROM duplicates d JOIN documents a ON a.doc_id = d.doc_a JOIN documents b ON b.doc_id = d.doc_b \
             ORDER BY d.doc_a, d.doc_b LIMIT 80",
        )
        .output()
        .unwrap();
    assert!(labels.status.success(), "{}", String::from_utf8_lossy(&labels.stderr));
    let gold = dir.join("gold.jsonl");
    std::fs::write(&gold, &labels.stdout).unwrap();
    let gold = gold.to_str().unwrap();
    run_ok(&["--quiet", "run", "--stage", "evaluate", "--out", embedded.to_str().unwrap(), "--gold", gold]);
    run_with_deadline(
        &[
            "--quiet",
            "run",
            "--stage",
            "evaluate",
            "--out",
            remote.to_str().unwrap(),
            "--gold",
            gold,
            "--engine",
            &engine,
        ],
        &cluster,
    );
    let scores = canonical_rows(&embedded, "gold_quality");
    assert!(scores.len() > 2, "{scores:?}");
    assert!(scores == canonical_rows(&remote, "gold_quality"), "gold scores differ on Ballista");

    // A night on Ballista against the history of an earlier night gives the
    // embedded night's repeats, clusters across crawls and history.
    let histories = [dir.join("history-embedded"), dir.join("history-ballista")];
    for (history, out) in histories.iter().zip([&embedded, &remote]) {
        let (h, o) = (history.to_str().unwrap(), out.to_str().unwrap());
        run_ok(&["--quiet", "history", "--history", h, "append", "--out", o, "--crawl-id", "night1"]);
    }
    let history_run = |history: &Path, out: &Path, engine: Option<&str>| {
        let mut args = vec!["--quiet", "run", "--out", out.to_str().unwrap(), "--history", history.to_str().unwrap()];
        args.extend(["--crawl-id", "night2"]);
        if let Some(engine) = engine {
            args.extend(["--engine", engine]);
        }
        args.iter().map(|a| a.to_string()).collect::<Vec<_>>()
    };
    let args = history_run(&histories[0], &embedded, None);
    run_ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let args = history_run(&histories[1], &remote, Some(&engine));
    run_with_deadline(&args.iter().map(String::as_str).collect::<Vec<_>>(), &cluster);
    for table in ["history_candidates", "repeats", "crawl_clusters"] {
        let (a, b) = (canonical_rows(&embedded, table), canonical_rows(&remote, table));
        assert!(!a.is_empty() && a == b, "table {table} differs between the embedded and the Ballista night");
    }
    for table in neardup::history::folder::tables() {
        let (a, b) = (histories[0].join(table), histories[1].join(table));
        assert!(canonical_rows(&a, "crawl=night2") == canonical_rows(&b, "crawl=night2"), "history {table}");
    }

    for log in &cluster.logs[1..] {
        let text = std::fs::read_to_string(log).unwrap();
        assert!(text.contains("Execute task"), "{} ran no task", log.display());
        assert!(!text.contains("panicked"), "{}:\n{text}", log.display());
    }

    drop(cluster);
    let _ = std::fs::remove_dir_all(&dir);
}
