//! Inputs and outputs in an object store: `file://` URLs, and `s3://` on a
//! local S3-compatible server (moto) on loopback. A run against the store
//! writes the same tables, row for row, as a run on local folders; the
//! store holds exactly the objects its manifests list (the commit
//! protocol of `neardup::runner::mirror`); tasks on "different machines" (separate
//! cache folders) share nothing but the store.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod common;
use common::{canonical_rows, pipeline, shared_data, table_names, temp_dir};

/// Tables of a local run of the sample, the reference for every store run
/// (input given by absolute path, so `warc_file` values differ from the
/// store's only by their URL prefix).
fn reference_run(name: &str) -> (PathBuf, String) {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data").display().to_string();
    let out = temp_dir(name);
    let o = pipeline().args(["--quiet", "run", "--input", &sample, "--out", out.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "reference run: {}", String::from_utf8_lossy(&o.stderr));
    (out, sample)
}

/// Asserts that the tables under `got` are those of the reference run, with
/// the input location `got_input` written where the reference has `input`.
fn assert_same_tables(reference: &Path, input: &str, got: &Path, got_input: &str) {
    assert_eq!(table_names(reference), table_names(got), "tables under {}", got.display());
    for table in table_names(reference) {
        let expected = canonical_rows(reference, &table);
        let mut actual: Vec<String> =
            canonical_rows(got, &table).into_iter().map(|r| r.replace(got_input, input)).collect();
        actual.sort();
        assert_eq!(expected.len(), actual.len(), "rows of table {table}");
        assert!(expected == actual, "table {table} differs from the local run");
    }
    assert!(!canonical_rows(got, "duplicates").is_empty(), "the comparison must cover verified pairs");
}

/// The objects each table folder of a `file://` output holds, and those its
/// manifests list: the two must be the same (nothing uncommitted is left
/// behind, nothing committed is missing).
fn assert_store_holds_what_manifests_list(store: &Path) {
    let mut listed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in std::fs::read_dir(store.join("_manifests")).unwrap() {
        let path = entry.unwrap().path();
        // A stage's bundle is a copy of its manifests, not one.
        if path.extension().is_some_and(|e| e == "bundle") {
            continue;
        }
        let m: neardup::tables::manifest::Manifest =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(!m.objects.is_empty(), "manifest of {} lists no objects", m.stage);
        for (table, names) in m.objects {
            listed.entry(table).or_default().extend(names);
        }
    }
    for table in table_names(store) {
        let held: BTreeSet<String> = std::fs::read_dir(store.join(&table))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(Some(&held), listed.get(&table), "objects of table {table}");
    }
}

fn run(args: &[&str]) -> (i32, String) {
    let o = pipeline().arg("--quiet").args(args).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn file_urls_with_tasks_on_separate_caches_give_the_local_tables() {
    let (reference, sample) = reference_run("store-reference");
    let scratch = temp_dir("store-file");
    let store = scratch.join("bucket/run");
    std::fs::create_dir_all(&store).unwrap();
    let out_url = format!("file://{}", store.display());
    let in_url = format!("file://{sample}");
    // Every task runs with a cache of its own, as on separate machines.
    let mut caches = 0;
    let mut task = |args: &[&str]| {
        caches += 1;
        let cache = scratch.join(format!("cache-{caches}"));
        let mut all = vec!["run", "--out", &out_url, "--cache", cache.to_str().unwrap()];
        all.extend_from_slice(args);
        let (code, err) = run(&all);
        assert_eq!(code, 0, "{args:?}: {err}");
        cache
    };
    for stage in ["ingest", "blocks", "boilerplate", "tokens"] {
        if stage == "boilerplate" {
            task(&["--stage", stage]);
            continue;
        }
        for shard in ["1/2", "0/2"] {
            let mut args = vec!["--stage", stage, "--shard", shard];
            if stage == "ingest" {
                args.extend(["--input", &in_url]);
            }
            task(&args);
        }
    }
    // The stages that read their own documents of `tokens` run as tasks
    // too: each pulls only its own parts (fresh caches, as on machines
    // that do not keep a task's cache from stage to stage).
    let by_task = ["descr_sample", "signatures", "search_keys"];
    for stage in [
        "exact",
        "stats",
        "descr_sample",
        "method_state",
        "signatures",
        "search_keys",
        "search_groups",
        "search_links",
        "search",
        "candidates",
        "verify_pairs",
        "verify",
        "place",
        "decide",
        "evaluate",
    ] {
        if !by_task.contains(&stage) {
            task(&["--stage", stage]);
            continue;
        }
        for shard in ["1/2", "0/2"] {
            let cache = task(&["--stage", stage, "--shard", shard]);
            let own = format!("part-{}-of-2-", &shard[..1]);
            let pulled: Vec<String> = std::fs::read_dir(cache.join("tokens"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert!(!pulled.is_empty() && pulled.iter().all(|n| n.starts_with(&own)), "{stage} {shard}: {pulled:?}");
        }
    }
    assert_same_tables(&reference, &sample, &store, &in_url);
    assert_store_holds_what_manifests_list(&store);
    assert!(store.join("report.html").is_file());

    // A task rerun from a fresh cache replaces its own objects only.
    let before: BTreeSet<String> = std::fs::read_dir(store.join("tokens"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    task(&["--stage", "tokens", "--shard", "1/2", "--force"]);
    let after: BTreeSet<String> = std::fs::read_dir(store.join("tokens"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let own = |names: &BTreeSet<String>| -> BTreeSet<String> {
        names.iter().filter(|n| n.starts_with("part-1-of-2-")).cloned().collect()
    };
    let others = |names: &BTreeSet<String>| -> BTreeSet<String> {
        names.iter().filter(|n| !n.starts_with("part-1-of-2-")).cloned().collect()
    };
    assert_eq!(others(&before), others(&after), "the other task's objects stay");
    assert!(!own(&after).is_empty() && own(&before).is_disjoint(&own(&after)), "{before:?} -> {after:?}");
    assert_store_holds_what_manifests_list(&store);
    // The task that completes a sharded stage bundles its manifests as
    // they are in the store; the rerun above bundled `tokens` again.
    for stage in ["ingest", "blocks", "tokens"] {
        let bundle: serde_json::Value =
            serde_json::from_slice(&std::fs::read(store.join(format!("_manifests/{stage}.bundle"))).unwrap()).unwrap();
        let bundled = bundle["manifests"].as_object().unwrap();
        let names: Vec<&String> = bundled.keys().collect();
        assert_eq!(names, [&format!("{stage}.shard-0-of-2.json"), &format!("{stage}.shard-1-of-2.json")]);
        for (name, entry) in bundled {
            let text = std::fs::read_to_string(store.join("_manifests").join(name)).unwrap();
            assert_eq!(entry["text"].as_str().unwrap(), text, "{name}");
        }
    }
    assert!(!store.join("_manifests/exact.bundle").exists(), "an unsharded stage has one manifest");

    // Analysts query the store through a cache of their own.
    let cache = scratch.join("cache-query");
    let o = pipeline()
        .args(["query", "--out", &out_url, "--cache", cache.to_str().unwrap(), "--format", "csv"])
        .arg("SELECT COUNT(*) AS n FROM tokens")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let expected = canonical_rows(&reference, "tokens").len();
    assert_eq!(String::from_utf8_lossy(&o.stdout), format!("n\n{expected}\n"));

    // `status` reads the store's manifests alone, through an empty cache:
    // every stage is up to date (a task rerun gives the same fingerprint),
    // the sharded ones with their two tasks; other methods make the
    // signatures stale, and what reads them with it.
    let status = |extra: &[&str]| {
        let cache = scratch.join("cache-status");
        let mut args = vec!["status", "--out", &out_url, "--cache", cache.to_str().unwrap(), "--input", &in_url];
        args.extend_from_slice(extra);
        args.extend(["--format", "json"]);
        let o = pipeline().args(&args).output().unwrap();
        let lines: Vec<serde_json::Value> =
            String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        (o.status.code(), lines)
    };
    let (code, lines) = status(&[]);
    assert_eq!(code, Some(0), "{lines:?}");
    assert_eq!(lines.len(), neardup::stages::all().len());
    assert!(lines.iter().all(|l| l["state"] == "up_to_date"), "{lines:?}");
    assert_eq!(lines[0]["stage"], "ingest");
    assert_eq!(lines[0]["tasks"], 2);
    assert!(!scratch.join("cache-status/documents").exists(), "status pulled no table");
    let (code, lines) = status(&["--methods", "a0"]);
    assert_eq!(code, Some(1));
    let signatures = lines.iter().find(|l| l["stage"] == "signatures").unwrap();
    assert_eq!(signatures["state"], "stale");
    let reasons = signatures["reasons"].as_array().unwrap();
    assert!(reasons.iter().any(|r| r.as_str().unwrap().starts_with("config changed: ")), "{signatures}");

    let _ = std::fs::remove_dir_all(&reference);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The real crawl files (damaged gzip members the reader seeks around,
/// file names with `~`, ARC, revisits) read through `file://` URLs give the
/// ingest tables of a local read.
#[test]
fn real_crawl_files_read_through_urls_as_from_disk() {
    let Some(data) = shared_data("warc") else { return };
    let data = data.display().to_string();
    // The local read: the ingest tables of the shared whole run over the
    // same files (exit 3 where a file yields no document, as here).
    let Some((local, local_code)) = common::shared_real_run() else { return };
    let scratch = temp_dir("store-real");
    let store = scratch.join("store");
    std::fs::create_dir_all(&store).unwrap();
    let in_url = format!("file://{data}");
    let out_url = format!("file://{}", store.display());
    let cache = scratch.join("cache");
    let (code, err) =
        run(&["run", "--stage", "ingest", "--input", &in_url, "--out", &out_url, "--cache", cache.to_str().unwrap()]);
    assert_eq!(code, local_code, "{err}");
    for table in ["documents", "revisits", "rejects", "ingest_files"] {
        let expected = canonical_rows(&local, table);
        let mut actual: Vec<String> =
            canonical_rows(&store, table).into_iter().map(|r| r.replace(&in_url, &data)).collect();
        actual.sort();
        assert!(expected.len() > 10, "{table} has rows");
        assert!(expected == actual, "table {table} differs between local and file:// reads");
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// `s3://` on a local S3-compatible server; needs feature `s3`.
#[cfg(feature = "s3")]
mod s3 {
    use super::*;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    /// A moto S3 server on a free loopback port, stopped on drop.
    struct S3Server {
        child: Child,
        endpoint: String,
    }

    impl Drop for S3Server {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// Starts `moto_server` when it is installed (`pip install 'moto[server]'`;
    /// `.ci/run` installs it). Without it the S3 test is skipped, unless
    /// `NEARDUP_REQUIRE_S3` is set (CI), where that is a failure.
    fn start_s3() -> Option<S3Server> {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = match Command::new("moto_server")
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(child) => child,
            Err(e) => {
                assert!(!common::required("NEARDUP_REQUIRE_S3"), "NEARDUP_REQUIRE_S3 is set but moto_server: {e}");
                eprintln!("skipping the S3 test: cannot start moto_server ({e}); pip install 'moto[server]'");
                return None;
            }
        };
        let server = S3Server { child, endpoint: format!("http://127.0.0.1:{port}") };
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "moto_server did not start listening on port {port}");
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(server)
    }

    /// Sends one bodiless HTTP request and returns the status line (bucket
    /// creation, which `object_store` does not do).
    fn http(endpoint: &str, method: &str, path: &str) -> String {
        use std::io::{Read, Write};
        let addr = endpoint.trim_start_matches("http://");
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        write!(s, "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut response = String::new();
        s.read_to_string(&mut response).unwrap();
        response.lines().next().unwrap_or_default().to_string()
    }

    /// The keys of every object under `prefix`, sorted.
    fn keys_under(store: &dyn object_store::ObjectStore, prefix: &str) -> Vec<String> {
        let listing = store.list(Some(&prefix.into()));
        let metas =
            neardup::storage::location::block_on(futures::TryStreamExt::try_collect::<Vec<_>>(listing)).unwrap();
        let mut keys: Vec<String> = metas.into_iter().map(|m| m.location.to_string()).collect();
        keys.sort();
        keys
    }

    #[test]
    fn s3_on_a_local_server_gives_the_local_tables() {
        let Some(server) = start_s3() else { return };
        let status = http(&server.endpoint, "PUT", "/neardup");
        assert!(status.contains(" 200"), "create bucket: {status}");
        let env = [
            ("AWS_ENDPOINT", server.endpoint.as_str()),
            ("AWS_ALLOW_HTTP", "true"),
            ("AWS_ACCESS_KEY_ID", "test"),
            ("AWS_SECRET_ACCESS_KEY", "test"),
            ("AWS_REGION", "us-east-1"),
        ];
        let s3 = |args: &[&str]| {
            let mut cmd = pipeline();
            cmd.arg("--quiet").args(args).envs(env);
            cmd.output().unwrap()
        };

        // The crawl goes into the bucket through the crate's own S3 client.
        let store = object_store::aws::AmazonS3Builder::new()
            .with_endpoint(&server.endpoint)
            .with_allow_http(true)
            .with_access_key_id("test")
            .with_secret_access_key("test")
            .with_region("us-east-1")
            .with_bucket_name("neardup")
            .build()
            .unwrap();
        let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data");
        for entry in std::fs::read_dir(&sample).unwrap() {
            let path = entry.unwrap().path();
            let key = format!("crawl/{}", path.file_name().unwrap().to_string_lossy());
            let bytes = std::fs::read(&path).unwrap();
            neardup::storage::location::block_on(object_store::ObjectStoreExt::put(
                &store,
                &key.as_str().into(),
                bytes.into(),
            ))
            .unwrap();
        }

        let (reference, sample_text) = reference_run("s3-reference");
        let scratch = temp_dir("store-s3");
        let cache = scratch.join("cache");
        // The nightly run: the crawl from the bucket into the bucket.
        let run_crawl = || {
            s3(&[
                "run",
                "--input",
                "s3://neardup/crawl/",
                "--out",
                "s3://neardup/run",
                "--cache",
                cache.to_str().unwrap(),
            ])
        };
        let o = run_crawl();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

        // What the store holds, read back through a fresh cache.
        let fresh = scratch.join("fresh");
        let o = s3(&["query", "--out", "s3://neardup/run", "--cache", fresh.to_str().unwrap(), "SELECT 1"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_same_tables(&reference, &sample_text, &fresh, "s3://neardup/crawl");

        // The store holds exactly the objects the manifests list, and the report.
        let objects = keys_under(&store, "run");
        assert!(objects.contains(&"run/report.html".to_string()), "{objects:?}");
        let mut listed = BTreeSet::new();
        for name in objects.iter().filter(|o| o.starts_with("run/_manifests/")) {
            let bytes =
                std::fs::read(fresh.join("_manifests").join(name.trim_start_matches("run/_manifests/"))).unwrap();
            let m: neardup::tables::manifest::Manifest = serde_json::from_slice(&bytes).unwrap();
            for (table, names) in m.objects {
                listed.extend(names.into_iter().map(|n| format!("run/{table}/{n}")));
            }
        }
        let held: BTreeSet<String> =
            objects.iter().filter(|o| !o.starts_with("run/_manifests/") && *o != "run/report.html").cloned().collect();
        assert_eq!(held, listed);

        // A second run is up to date: nothing is uploaded again.
        let o = run_crawl();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let again = keys_under(&store, "run");
        assert_eq!(objects, again);
        // `status` over the store: the run above left everything up to date.
        let o = s3(&[
            "status",
            "--input",
            "s3://neardup/crawl/",
            "--out",
            "s3://neardup/run",
            "--cache",
            fresh.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));

        // Nights against a history in the bucket: the crawl from the bucket
        // into a local folder, kept as crawl night1, then appended as night2
        // from another machine's cache.
        let night = scratch.join("night");
        let o = s3(&[
            "run",
            "--input",
            "s3://neardup/crawl/",
            "--out",
            night.to_str().unwrap(),
            "--history",
            "s3://neardup/history",
            "--history-cache",
            scratch.join("history-a").to_str().unwrap(),
            "--crawl-id",
            "night1",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let other = scratch.join("history-b");
        let history = |args: &[&str]| {
            let mut all = vec!["history", "--history", "s3://neardup/history", "--history-cache"];
            all.push(other.to_str().unwrap());
            all.extend(args);
            s3(&all)
        };
        let o = history(&["append", "--out", night.to_str().unwrap(), "--crawl-id", "night2"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let o = history(&["list"]);
        let listing = String::from_utf8(o.stdout).unwrap();
        assert_eq!(listing.lines().map(|l| l.split('\t').next().unwrap()).collect::<Vec<_>>(), ["night1", "night2"]);
        let mut listed = BTreeSet::new();
        let objects = keys_under(&store, "history");
        for name in objects.iter().filter(|o| o.starts_with("history/_crawls/")) {
            let bytes = neardup::storage::location::block_on(async {
                object_store::ObjectStoreExt::get(&store, &name.as_str().into()).await.unwrap().bytes().await
            })
            .unwrap();
            let m: neardup::history::CrawlManifest = serde_json::from_slice(&bytes).unwrap();
            for (table, names) in m.objects {
                listed.extend(names.into_iter().map(|n| format!("history/{table}/crawl={}/{n}", m.crawl)));
            }
        }
        let held: BTreeSet<String> = objects.iter().filter(|o| !o.starts_with("history/_crawls/")).cloned().collect();
        assert!(held.len() > 8 && held == listed, "{held:?}");

        let _ = std::fs::remove_dir_all(&reference);
        let _ = std::fs::remove_dir_all(&scratch);
    }
}

/// A build without feature `s3` refuses `s3://` with a usage error that says
/// how to get it, before touching anything. CI must test the S3 client, so
/// there (`NEARDUP_REQUIRE_S3`) a build without it is a failure.
#[test]
#[cfg(not(feature = "s3"))]
fn s3_urls_are_refused_by_a_build_without_s3() {
    assert!(
        !common::required("NEARDUP_REQUIRE_S3"),
        "NEARDUP_REQUIRE_S3 is set but the tests were built without feature `s3`: run `cargo test --all-features`"
    );
    let scratch = temp_dir("store-no-s3");
    let (code, stderr) = run(&["run", "--out", "s3://bucket/run", "--cache", scratch.join("cache").to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--features s3"), "{stderr}");
}

/// The history in an object store (`--history file:///...`): every
/// machine works on its own cache, a crawl is committed whole (the store
/// holds exactly the objects its manifests list, also after a rerun and a
/// compaction), a night on another machine is matched against the crawls
/// committed before, and a dropped crawl is gone for everyone.
#[test]
fn a_history_in_an_object_store_is_shared_through_its_manifests() {
    let (out, _) = reference_run("history-store-night");
    let scratch = temp_dir("history-store");
    let store = scratch.join("store");
    std::fs::create_dir_all(&store).unwrap();
    let url = format!("file://{}", store.display());
    let history = |cache: &str, args: &[&str]| {
        let cache = scratch.join(cache);
        let mut all = vec!["history", "--history", &url, "--history-cache", cache.to_str().unwrap()];
        all.extend(args);
        let (code, stderr) = run(&all);
        assert_eq!(code, 0, "history {args:?}: {stderr}");
    };
    // The objects under the store, and those its manifests list.
    let held_and_listed = || {
        let mut held = BTreeSet::new();
        let mut listed = BTreeSet::new();
        for entry in walk(&store) {
            let relative = entry.strip_prefix(&store).unwrap().to_string_lossy().into_owned();
            if let Some(name) = relative.strip_prefix("_crawls/") {
                let m: neardup::history::CrawlManifest =
                    serde_json::from_slice(&std::fs::read(&entry).unwrap()).unwrap();
                assert_eq!(format!("{}.json", m.crawl), name);
                for (table, files) in m.objects {
                    listed.extend(files.into_iter().map(|f| format!("{table}/crawl={}/{f}", m.crawl)));
                }
            } else {
                held.insert(relative);
            }
        }
        (held, listed)
    };
    let o = out.to_str().unwrap();
    history("machine-a", &["append", "--out", o, "--crawl-id", "night1"]);
    // Another machine matches night 2 against night 1 and commits it.
    history("machine-b", &["match", "--out", o, "--crawl-id", "night2"]);
    let repeats = canonical_rows(&out, "repeats");
    assert!(!repeats.is_empty() && repeats.iter().all(|r| r.contains(" | night1 | ")), "{repeats:?}");
    history("machine-b", &["append", "--out", o, "--crawl-id", "night2"]);
    let (held, listed) = held_and_listed();
    assert!(held.iter().any(|h| h.starts_with("signatures/crawl=night2/")), "{held:?}");
    assert_eq!(held, listed);
    // Rerunning night 2 replaces its objects.
    history("machine-b", &["append", "--out", o, "--crawl-id", "night2"]);
    let (again, listed) = held_and_listed();
    assert_eq!(again, listed);
    assert!(again.is_disjoint(&held.iter().filter(|h| h.contains("night2")).cloned().collect()));
    // Machine A compacts (pulling night 2 first): rows unchanged, objects listed.
    let rows_before = canonical_rows(&scratch.join("machine-b/signatures"), "crawl=night2");
    history("machine-a", &["compact"]);
    let (compacted, listed) = held_and_listed();
    assert_eq!(compacted, listed);
    assert_eq!(canonical_rows(&scratch.join("machine-a/signatures"), "crawl=night2"), rows_before);
    // Dropped on one machine, gone on another.
    history("machine-a", &["drop", "night1"]);
    let (held, listed) = held_and_listed();
    assert_eq!(held, listed);
    assert!(held.iter().all(|h| !h.contains("crawl=night1")), "{held:?}");
    let listing = pipeline()
        .args(["history", "--history", &url, "--history-cache", scratch.join("machine-c").to_str().unwrap(), "list"])
        .output()
        .unwrap();
    let listing = String::from_utf8(listing.stdout).unwrap();
    assert_eq!(listing.lines().map(|l| l.split('\t').next().unwrap()).collect::<Vec<_>>(), ["night2"]);
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Every file under `dir`, recursively.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
