// A twistarena starter bot in Rust, standard library only, reading the bridge's
// plain-text form (no JSON parser needed):
//   rustc -O -o bot bot.rs
//   twistarena bot --exec ./bot --text --server ... --match ... --token ...
// Each decision is a block of lines ending with "end"; the bot answers one action id.
// Anything for a person goes to stderr (the bridge logs it).
use std::io::{self, BufRead, Write};

// Lower is better: twist or take a bonus first, then plain card plays,
// keep Twhist cards for later, decline and take the Twisted row last.
fn rank(kind: &str) -> i64 {
    match kind {
        "twist" | "bonus" => 0,
        "play" | "extend" | "start" | "pick" | "reserve" => 1,
        "twhist" => 3,
        "decline" | "stop" => 4,
        "take" => 5,
        _ => 2,
    }
}

fn main() {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut best: Option<(i64, i64, i64)> = None; // (kind rank, card value, id)
    for line in io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let words: Vec<&str> = line.split(' ').collect();
        match words[0] {
            "decision" => best = None,
            "action" => {
                let mut mine = (2, 0, words[1].parse().unwrap_or(-1));
                for word in words[2..].iter().take_while(|w| **w != "|") {
                    match word.split_once('=') {
                        Some(("kind", value)) => mine.0 = rank(value),
                        Some(("card", value)) | Some(("card.value", value)) => {
                            mine.1 = value.parse().unwrap_or(0)
                        }
                        _ => {}
                    }
                }
                if best.map_or(true, |b| mine < b) {
                    best = Some(mine);
                }
            }
            "end" => {
                writeln!(out, "{}", best.map_or(-1, |b| b.2)).expect("stdout");
                out.flush().expect("stdout");
            }
            "over" => {
                eprintln!("match over: {}", line);
                return;
            }
            _ => {}
        }
    }
}
