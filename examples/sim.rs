//! `make sim`: the deterministic simulation over many seeds.
//!
//! ```text
//! cargo run --profile bench --example sim -- --seeds 10000      # seeds 0..10000
//! cargo run --profile bench --example sim -- --seed 1234 --verbose  # replay one
//! ```
//!
//! Options: `--seeds N`, `--from S` (first seed), `--seed S` (just one),
//! `--ops N` (operations per runtime), `--epochs N` (runtimes per seed at
//! most), `--verbose`, `--determinism N` (run the first N seeds twice and
//! compare their digests), `--per-seed FILE` (one line per seed: its
//! operations, faults and log digest, so a change that must not alter
//! behaviour can be diffed seed by seed). Exits non-zero when a seed breaks an invariant,
//! printing the one command that replays it.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use subagent_tree::sim::{run_seed, Config, Report};

thread_local! {
    static CURRENT: Cell<Option<u64>> = const { Cell::new(None) };
}

/// The seed running now and how many seeds have finished, for the watchdog.
static RUNNING: AtomicU64 = AtomicU64::new(u64::MAX);
static FINISHED: AtomicU64 = AtomicU64::new(0);

/// A seed runs in well under a second; one that has run for minutes is spinning
/// in a loop that never yields (the executor cannot see it), so the watchdog
/// names it and exits rather than let `make sim` hang without a word.
fn watchdog() {
    const STUCK: Duration = Duration::from_secs(120);
    std::thread::spawn(|| {
        let (mut seen, mut since) = (u64::MAX, Instant::now());
        loop {
            std::thread::sleep(Duration::from_secs(1));
            let finished = FINISHED.load(Ordering::Relaxed);
            if finished != seen {
                (seen, since) = (finished, Instant::now());
            } else if since.elapsed() > STUCK {
                let seed = RUNNING.load(Ordering::Relaxed);
                eprintln!(
                    "[sim] seed {seed} has run {}s without finishing. Replay it with:\n  {}",
                    STUCK.as_secs(),
                    replay(seed)
                );
                std::process::exit(4);
            }
        }
    });
}

fn replay(seed: u64) -> String {
    format!("cargo run --profile bench --example sim -- --seed {seed} --verbose")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut seeds, mut from, mut only, mut determinism) = (10_000u64, 0u64, None, 0u64);
    let mut config = Config::default();
    let mut per_seed: Option<std::io::BufWriter<std::fs::File>> = None;
    while let Some(arg) = args.next() {
        if arg == "--per-seed" {
            let path = args.next().unwrap_or_else(|| usage(&arg));
            let file = std::fs::File::create(&path).unwrap_or_else(|e| {
                eprintln!("[sim] cannot write {path}: {e}");
                std::process::exit(64)
            });
            per_seed = Some(std::io::BufWriter::new(file));
            continue;
        }
        let mut value = || args.next().and_then(|v| v.parse::<u64>().ok()).unwrap_or_else(|| usage(&arg));
        match arg.as_str() {
            "--seeds" => seeds = value(),
            "--from" => from = value(),
            "--seed" => only = Some(value()),
            "--ops" => config.ops_per_epoch = value() as u32,
            "--epochs" => config.max_epochs = value() as u32,
            "--determinism" => determinism = value(),
            "--verbose" => config.verbose = true,
            _ => usage(&arg),
        }
    }
    let range: Vec<u64> = match only {
        Some(seed) => vec![seed],
        None => (from..from + seeds).collect(),
    };

    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        if let Some(seed) = CURRENT.with(Cell::get) {
            eprintln!("[sim] seed {seed} PANICKED. Replay it with:\n  {}", replay(seed));
        }
    }));

    watchdog();
    let started = Instant::now();
    let (mut ops, mut faults) = (BTreeMap::<&str, u64>::new(), BTreeMap::<&str, u64>::new());
    let (mut epochs, mut failed) = (0u64, Vec::<Report>::new());
    for (i, &seed) in range.iter().enumerate() {
        CURRENT.with(|c| c.set(Some(seed)));
        RUNNING.store(seed, Ordering::Relaxed);
        let report = match std::panic::catch_unwind(|| run_seed(seed, &config)) {
            Ok(report) => report,
            Err(_) => {
                eprintln!("[sim] seed {seed} panicked. Replay it with:\n  {}", replay(seed));
                std::process::exit(2);
            }
        };
        if (i as u64) < determinism {
            let again = run_seed(seed, &config);
            if again.digest != report.digest || again.ops != report.ops || again.faults != report.faults {
                eprintln!(
                    "[sim] seed {seed} is not deterministic: two runs differ. Replay it with:\n  {}",
                    replay(seed)
                );
                std::process::exit(3);
            }
        }
        FINISHED.fetch_add(1, Ordering::Relaxed);
        if let Some(out) = per_seed.as_mut() {
            use std::io::Write;
            let line = format!("{seed} ops {:?} faults {:?} digest {:x}", report.ops, report.faults, report.digest);
            if let Err(e) = writeln!(out, "{line}") {
                eprintln!("[sim] cannot write the per-seed file: {e}");
                std::process::exit(64);
            }
        }
        epochs += report.epochs as u64;
        for (k, v) in &report.ops {
            *ops.entry(k).or_default() += v;
        }
        for (k, v) in &report.faults {
            *faults.entry(k).or_default() += v;
        }
        if !report.ok() {
            eprintln!("[sim] seed {seed}: {} violation(s)", report.violations.len());
            failed.push(report);
        }
    }
    CURRENT.with(|c| c.set(None));
    if let Some(mut out) = per_seed.take() {
        use std::io::Write;
        if let Err(e) = out.flush() {
            eprintln!("[sim] cannot write the per-seed file: {e}");
            std::process::exit(64);
        }
    }
    let elapsed = started.elapsed();

    // Issued operations, apart from outcomes (`ok.*`) and lifecycle events (`event.*`).
    let issued = |k: &&str| !k.starts_with("ok.") && !k.starts_with("event.");
    let total_ops: u64 = ops.iter().filter(|(k, _)| issued(k)).map(|(_, v)| v).sum();
    let total_faults: u64 = faults.values().sum();
    println!(
        "[sim] {} seed(s), {epochs} runtime(s), {total_ops} operations, {total_faults} faults injected in {:.1}s",
        range.len(),
        elapsed.as_secs_f64()
    );
    println!("[sim] operations by kind:");
    for (k, v) in ops.iter().filter(|(k, _)| issued(k)) {
        println!("  {k:<28} {v}");
    }
    println!("[sim] outcomes and lifecycle events:");
    for (k, v) in ops.iter().filter(|(k, _)| !issued(k)) {
        println!("  {k:<28} {v}");
    }
    println!("[sim] faults by kind:");
    for (k, v) in &faults {
        println!("  {k:<28} {v}");
    }
    if let Some(first) = failed.first() {
        println!("[sim] FAILED: {} seed(s) broke invariants; the first, seed {}:", failed.len(), first.seed);
        for v in first.violations.iter().take(12) {
            println!("  - {v}");
        }
        println!("[sim] replay it with:\n  {}", replay(first.seed));
        std::process::exit(1);
    }
    println!("[sim] all invariants held");
}

fn usage(arg: &str) -> ! {
    eprintln!(
        "sim: bad argument {arg:?}; options: --seeds N --from S --seed S --ops N --epochs N --determinism N --verbose --per-seed FILE"
    );
    std::process::exit(64);
}
