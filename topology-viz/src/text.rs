//! Label text: how wide it is drawn, where it wraps, how it is escaped.
//!
//! No font is read: widths come from Helvetica's metrics (which Arial and
//! Liberation Sans share), with a margin for the wider fallbacks.

/// The font of every label.
pub(crate) const FONT_FAMILY: &str = "Helvetica, Arial, 'Liberation Sans', sans-serif";
/// A vertex label's size, in pixels.
pub(crate) const FONT_SIZE: f64 = 12.0;
/// A line's height, in pixels.
pub(crate) const LINE_HEIGHT: f64 = 15.0;
/// Lines are wrapped to at most this width, in pixels, where they can be.
pub(crate) const WRAP_WIDTH: f64 = 168.0;

/// Helvetica's advance widths, in thousandths of an em, of ASCII 32..=126.
const HELVETICA: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, // ' '../
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, // 0..?
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778, // @..O
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, // P.._
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, // `..o
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584, // p..~
];

/// The width of `text` at `size` pixels, with 6% to spare for fonts
/// wider than Helvetica.
pub(crate) fn width(text: &str, size: f64) -> f64 {
    let thousandths: u32 = text
        .chars()
        .map(|c| match c {
            ' '..='~' => u32::from(HELVETICA[c as usize - 32]),
            // East Asian wide characters take a full em.
            '\u{1100}'..='\u{115f}' | '\u{2e80}'..='\u{a4cf}' | '\u{ac00}'..='\u{d7a3}' => 1000,
            '\u{f900}'..='\u{faff}' | '\u{fe30}'..='\u{fe4f}' | '\u{ff00}'..='\u{ff60}' => 1000,
            c if c.is_control() => 0,
            _ => 600,
        })
        .sum();
    f64::from(thousandths) * size / 1000.0 * 1.06
}

/// `name` in lines of at most [`WRAP_WIDTH`] where it can break: after a
/// `-` (Kafka's names are `KSTREAM-AGGREGATE-STATE-STORE-0000000003`),
/// else after a `.` or `_`. A part with no break in it stays whole.
pub(crate) fn wrap(name: &str) -> Vec<String> {
    if name.is_empty() {
        return vec![String::new()];
    }
    // The pieces, each ending at a break.
    let mut pieces: Vec<&str> = Vec::new();
    let mut start = 0;
    for (at, c) in name.char_indices() {
        if matches!(c, '-' | '.' | '_' | '/' | ':') {
            let end = at + c.len_utf8();
            pieces.push(&name[start..end]);
            start = end;
        }
    }
    if start < name.len() {
        pieces.push(&name[start..]);
    }
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for piece in pieces {
        if !line.is_empty() && width(&line, FONT_SIZE) + width(piece, FONT_SIZE) > WRAP_WIDTH {
            lines.push(std::mem::take(&mut line));
        }
        line.push_str(piece);
    }
    lines.push(line);
    lines
}

/// `text` made safe for XML content and attribute values: `&<>"'`
/// escaped, characters XML does not allow replaced by U+FFFD.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || matches!(c, '\u{fffe}' | '\u{ffff}') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_names_wrap_after_a_dash() {
        assert_eq!(
            wrap("KSTREAM-SOURCE-0000000000"),
            ["KSTREAM-SOURCE-", "0000000000"]
        );
        assert_eq!(
            wrap("KSTREAM-SINK-0000000001"),
            ["KSTREAM-SINK-", "0000000001"]
        );
        assert_eq!(
            wrap("global-repartition-filter"),
            ["global-repartition-filter"]
        );
        assert_eq!(
            wrap("KSTREAM-KEY-SELECT-0000000007-repartition"),
            ["KSTREAM-KEY-SELECT-", "0000000007-repartition"]
        );
        assert_eq!(
            wrap("KSTREAM-AGGREGATE-STATE-STORE-0000000003"),
            ["KSTREAM-AGGREGATE-", "STATE-STORE-0000000003"]
        );
        assert_eq!(wrap("orders"), ["orders"]);
        assert_eq!(wrap(""), [""]);
        let long = "x".repeat(60);
        assert_eq!(wrap(&long), [long.as_str()]);
    }

    #[test]
    fn widths_follow_helvetica() {
        // K S T R E A M -: 667 + 667 + 611 + 722 + 667 + 667 + 833 + 333 thousandths.
        let w = width("KSTREAM-", 10.0);
        assert!((w - 5.167 * 10.0 * 1.06).abs() < 1e-9, "{w}");
        assert_eq!(width("", 12.0), 0.0);
        assert!(width("語", 10.0) > width("a", 10.0));
    }

    #[test]
    fn escapes_markup_and_forbidden_characters() {
        assert_eq!(
            escape("a<b>&\"c'\u{1}"),
            "a&lt;b&gt;&amp;&quot;c&#39;\u{fffd}"
        );
    }
}
