//! Seeded fault schedules against a three-broker simulated cluster, many of
//! them: `cargo run --release --example fault_soak -- [schedules] [steps]`
//! (default 200 schedules of 200 steps). Prints how many schedules, steps
//! and checks passed, or the first violation with its seed and timeline
//! (replay it with the same seed: the timeline is the same byte for byte).

use streams_broker::replication::schedule::{Schedule, run};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let schedules: u64 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(200);
    let steps: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(200);
    let (mut checks, mut acknowledged) = (0usize, 0usize);
    for seed in 0..schedules {
        let report = run(&Schedule::generate(seed, steps))?;
        checks += report.checks;
        acknowledged += report.acknowledged;
    }
    println!(
        "{schedules} schedules of {steps} steps: {} steps run, {checks} checks passed, {acknowledged} acks=all records never lost",
        schedules * steps as u64
    );
    Ok(())
}
