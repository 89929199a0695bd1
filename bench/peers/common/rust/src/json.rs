//! One JSON Lines record, keys in the order they are added (strings and numbers only).

use std::fmt::Write as _;
use std::io::Write as _;

/// A JSON object being built; `print` writes it as one line on stdout.
pub struct Line {
    text: String,
}

impl Default for Line {
    fn default() -> Self {
        Self::new()
    }
}

impl Line {
    pub fn new() -> Line {
        Line { text: String::from("{") }
    }

    fn key(&mut self, k: &str) {
        if self.text.len() > 1 {
            self.text.push(',');
        }
        self.quoted(k);
        self.text.push(':');
    }

    fn quoted(&mut self, s: &str) {
        self.text.push('"');
        for c in s.chars() {
            match c {
                '"' => self.text.push_str("\\\""),
                '\\' => self.text.push_str("\\\\"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(self.text, "\\u{:04x}", c as u32);
                }
                c => self.text.push(c),
            }
        }
        self.text.push('"');
    }

    /// A string field.
    pub fn s(mut self, k: &str, v: &str) -> Line {
        self.key(k);
        self.quoted(v);
        self
    }

    /// An integer field.
    pub fn i(mut self, k: &str, v: u64) -> Line {
        self.key(k);
        let _ = write!(self.text, "{v}");
        self
    }

    /// A number with `decimals` digits after the point (non-finite values: null).
    pub fn f(mut self, k: &str, v: f64, decimals: usize) -> Line {
        self.key(k);
        if v.is_finite() {
            let _ = write!(self.text, "{v:.decimals$}");
        } else {
            self.text.push_str("null");
        }
        self
    }

    /// The finished object.
    pub fn text(mut self) -> String {
        self.text.push('}');
        self.text
    }

    /// Writes the object and a newline on stdout, flushed.
    pub fn print(self) {
        let line = self.text();
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::Line;

    #[test]
    fn keys_keep_their_order_and_strings_are_escaped() {
        let t = Line::new().s("a", "x\"y").i("b", 3).f("c", 1.5, 2).text();
        assert_eq!(t, r#"{"a":"x\"y","b":3,"c":1.50}"#);
    }
}
