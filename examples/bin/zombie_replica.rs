//! KAFKA-6880, the zombie replica, with leader epochs and before them:
//! `cargo run --example zombie_replica`.

use streams_broker::ReplicationMode;
use streams_examples::zombie_replica;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for (title, mode) in [
        (
            "with leader epochs (KIP-101/KIP-320)",
            ReplicationMode::LeaderEpochs,
        ),
        (
            "before KIP-101 (KAFKA-6880)",
            ReplicationMode::LegacyHighWatermark,
        ),
    ] {
        let story = zombie_replica::run(mode)?;
        println!("== {title}");
        for line in &story.timeline {
            println!("  {line}");
        }
        println!(
            "  log end offsets before broker 2 resumes: {:?}",
            story.before_resume
        );
        println!(
            "  log end offsets after:                   {:?}",
            story.after_resume
        );
        println!("  broker 2 holds at 40..49: {:?}", story.zombie_40_to_49);
        println!("  the leader holds at 40..49: {:?}", story.leader_40_to_49);
        println!(
            "  a consumer reading from 40 once broker 2 leads: {:?}",
            story.read_after_failover
        );
    }
    Ok(())
}
