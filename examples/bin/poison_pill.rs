//! Poison pills (a malformed JSON record, an Avro record with an unknown
//! schema id) run three ways: fail, continue, dead letter queue.
//! `cargo run --example poison_pill`.

use streams_examples::poison_pill::{self, DLQ, Mode, OUTPUT};

/// Text as is; binary data (control characters) in hex.
fn text(bytes: Option<&[u8]>) -> String {
    let Some(b) = bytes else {
        return "null".to_owned();
    };
    let printable = b
        .iter()
        .all(|&c| !c.is_ascii_control() || c == b'\n' || c == b'\t');
    match std::str::from_utf8(b) {
        Ok(s) if printable => s.to_owned(),
        _ => format!(
            "hex:{}",
            b.iter().map(|x| format!("{x:02x}")).collect::<String>()
        ),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for mode in [Mode::Fail, Mode::Continue, Mode::DeadLetterQueue] {
        let outcome = poison_pill::run(mode)?;
        println!("== {mode:?}");
        for line in &outcome.lines {
            println!("  {OUTPUT}: {line}");
        }
        if let Some(error) = &outcome.error {
            println!("  stopped: {error}");
        }
        println!("  dropped-records-total: {}", outcome.dropped);
        for dead in &outcome.dead_letters {
            println!(
                "  {DLQ}: key {} value {}",
                text(dead.key.as_deref()),
                text(dead.value.as_deref())
            );
            for header in &dead.headers {
                let value = text(header.value.as_deref());
                let value = value.lines().collect::<Vec<_>>().join("\n      ");
                println!("    {} = {value}", header.key);
            }
        }
    }
    Ok(())
}
