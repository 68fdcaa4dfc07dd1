//! The deterministic simulation (issue 7) inside `cargo test`: a few hundred
//! seeds, and the same seed replaying the same run. `make sim` runs 10,000.
#![cfg(not(target_arch = "wasm32"))]

use subagent_tree::sim::{run_seed, Config};

const SEEDS: u64 = 200;

#[test]
fn the_simulation_keeps_every_invariant() {
    let config = Config::default();
    let mut failures = Vec::new();
    let (mut ops, mut faults) = (0u64, 0u64);
    for seed in 0..SEEDS {
        match std::panic::catch_unwind(|| run_seed(seed, &config)) {
            Ok(report) => {
                ops += report.ops.values().sum::<u64>();
                faults += report.faults.values().sum::<u64>();
                if !report.ok() {
                    failures.push(format!("seed {seed}: {}", report.violations.join("; ")));
                }
            }
            Err(_) => failures.push(format!("seed {seed}: panicked")),
        }
    }
    assert!(ops > SEEDS * 20 && faults > SEEDS, "the workload ran: {ops} operations, {faults} faults");
    assert!(
        failures.is_empty(),
        "{} seed(s) failed; replay one with `cargo run --profile bench --example sim -- --seed N --verbose`:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_same_seed_replays_the_same_run() {
    let config = Config::default();
    for seed in [1, 7, 42, 1234, 99_999] {
        let (a, b) = (run_seed(seed, &config), run_seed(seed, &config));
        assert_eq!((a.digest, &a.ops, &a.faults), (b.digest, &b.ops, &b.faults), "seed {seed}");
    }
    assert_ne!(run_seed(1, &config).digest, run_seed(2, &config).digest);
}
