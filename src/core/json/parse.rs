//! JSON text to a [`Value`], for the bridge's one-crossing fast path: JS
//! writes untrusted data as one JSON string and this reads it back. It is
//! strict and total (it never panics), and it answers `None` for anything
//! the exact reader should decide instead: a lone surrogate (which strict
//! input refuses and lenient input replaces), nesting past `max_depth`, or
//! text that is not JSON.
//!
//! Integers are read by hand; other numbers go through a formatter-like
//! hook, so the wasm build can hand them to JS's `Number` and leave Rust's
//! float parsing (several KB) out.

use super::Value;

type NumberParser = fn(&str) -> Option<f64>;

thread_local! {
    static NUMBER_VALUE: std::cell::Cell<Option<NumberParser>> = const { std::cell::Cell::new(None) };
}

/// Sets how non-integer number text becomes an `f64` (see the module doc).
pub fn set_number_parser(parse: NumberParser) {
    NUMBER_VALUE.with(|p| p.set(Some(parse)));
}

/// Parses `text` as one JSON value nested at most `max_depth` levels.
pub fn parse(text: &str, max_depth: usize) -> Option<Value> {
    let mut reader = Reader { src: text, text: text.as_bytes(), at: 0, max_depth };
    let value = reader.value(0)?;
    reader.skip_space();
    (reader.at == reader.text.len()).then_some(value)
}

struct Reader<'a> {
    src: &'a str,
    text: &'a [u8],
    at: usize,
    max_depth: usize,
}

impl Reader<'_> {
    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    #[inline(always)]
    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.at += 1;
        }
    }

    #[inline(always)]
    fn eat(&mut self, byte: u8) -> bool {
        self.skip_space();
        let found = self.peek() == Some(byte);
        if found {
            self.at += 1;
        }
        found
    }

    fn literal(&mut self, word: &[u8], value: Value) -> Option<Value> {
        let end = self.at.checked_add(word.len())?;
        (self.text.get(self.at..end)? == word).then(|| {
            self.at = end;
            value
        })
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        self.skip_space();
        match self.peek()? {
            b'n' => self.literal(b"null", Value::Null),
            b't' => self.literal(b"true", Value::Bool(true)),
            b'f' => self.literal(b"false", Value::Bool(false)),
            b'"' => self.string().map(Value::String),
            b'[' if depth < self.max_depth => {
                self.at += 1;
                let mut items = Vec::new();
                if !self.eat(b']') {
                    loop {
                        items.push(self.value(depth + 1)?);
                        if self.eat(b']') {
                            break;
                        }
                        if !self.eat(b',') {
                            return None;
                        }
                    }
                }
                Some(Value::Array(items))
            }
            b'{' if depth < self.max_depth => {
                self.at += 1;
                let mut entries = Vec::new();
                if !self.eat(b'}') {
                    loop {
                        self.skip_space();
                        if self.peek() != Some(b'"') {
                            return None;
                        }
                        let key = self.string()?;
                        if !self.eat(b':') {
                            return None;
                        }
                        entries.push((key, self.value(depth + 1)?));
                        if self.eat(b'}') {
                            break;
                        }
                        if !self.eat(b',') {
                            return None;
                        }
                    }
                }
                Some(Value::Object(entries))
            }
            b'-' | b'0'..=b'9' => self.number().map(Value::Number),
            _ => None,
        }
    }

    fn number(&mut self) -> Option<f64> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let digits_start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        let digits = &self.text[digits_start..self.at];
        if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') {
            return None;
        }
        let mut fraction_or_exponent = false;
        if self.peek() == Some(b'.') {
            self.at += 1;
            fraction_or_exponent = true;
            if !self.digits() {
                return None;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            fraction_or_exponent = true;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !self.digits() {
                return None;
            }
        }
        if !fraction_or_exponent && digits.len() <= 15 {
            // Exact in an f64: at most 15 decimal digits.
            let n = digits.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')) as f64;
            return Some(if negative { -n } else { n });
        }
        // The slice holds only ASCII digits, signs, '.' and 'e'.
        let token = self.src.get(start..self.at)?;
        match NUMBER_VALUE.with(|p| p.get()) {
            Some(parse) => parse(token),
            None => default_number_value(token),
        }
    }

    fn digits(&mut self) -> bool {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at > start
    }

    fn string(&mut self) -> Option<String> {
        self.at += 1; // the opening quote
        let mut out = String::new();
        loop {
            let run_start = self.at;
            while matches!(self.peek(), Some(b) if b != b'"' && b != b'\\' && b >= 0x20) {
                self.at += 1;
            }
            // A run starts and stops at ASCII bytes, so it is whole characters.
            out.push_str(self.src.get(run_start..self.at)?);
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return Some(out);
                }
                b'\\' => {
                    self.at += 1;
                    let escaped = self.peek()?;
                    self.at += 1;
                    out.push(match escaped {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return None,
                    });
                }
                _ => return None, // a raw control character
            }
        }
    }

    /// The code point of `\uXXXX` (the `\u` already read), joining a surrogate
    /// pair; a lone surrogate is `None`.
    fn unicode_escape(&mut self) -> Option<char> {
        let high = self.hex4()?;
        if !(0xD800..0xE000).contains(&high) {
            return char::from_u32(high);
        }
        if high >= 0xDC00 || self.text.get(self.at..self.at + 2)? != b"\\u" {
            return None;
        }
        self.at += 2;
        let low = self.hex4()?;
        if !(0xDC00..0xE000).contains(&low) {
            return None;
        }
        char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.text.get(self.at..self.at + 4)?;
        self.at += 4;
        digits.iter().try_fold(0u32, |n, &d| Some(n * 16 + (d as char).to_digit(16)?))
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn default_number_value(token: &str) -> Option<f64> {
    token.parse().ok().filter(|n: &f64| n.is_finite())
}

/// Without the bridge's parser (never the case in the package): refused, so
/// the exact reader decides and no float parsing is linked into the wasm.
#[cfg(target_arch = "wasm32")]
fn default_number_value(_: &str) -> Option<f64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Option<Value> {
        parse(text, 128)
    }

    #[test]
    fn reads_every_kind_of_value_and_keeps_key_order() {
        let v = p(r#"{"b":[1,-2,3.5,1e+21,null,true,false],"a":"x\"y\\\n\u00e9\ud83d\ude00"}"#).unwrap();
        assert_eq!(
            v,
            Value::Object(vec![
                (
                    "b".into(),
                    Value::Array(vec![
                        Value::Number(1.0),
                        Value::Number(-2.0),
                        Value::Number(3.5),
                        Value::Number(1e21),
                        Value::Null,
                        Value::Bool(true),
                        Value::Bool(false),
                    ])
                ),
                ("a".into(), Value::from("x\"y\\\né😀")),
            ])
        );
        assert_eq!(p(" [ ] "), Some(Value::Array(vec![])));
        assert_eq!(p("{}"), Some(Value::Object(vec![])));
        assert_eq!(p("\"€\""), Some(Value::from("€")));
    }

    #[test]
    fn anything_the_exact_reader_must_decide_is_none() {
        for text in [
            "\"\\ud800\"",
            "\"\\udc00\\ud800\"",
            "\"\\ud800x\"",
            "\"a\u{1}\"",
            "\"\\x\"",
            "\"open",
            "[1,]",
            "[1 2]",
            "{\"a\"1}",
            "{a:1}",
            "01",
            "-",
            "1.",
            "1e",
            "nul",
            "1 2",
            "",
            "NaN",
            "1e400",
        ] {
            assert_eq!(p(text), None, "{text}");
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = |n: usize| "[".repeat(n) + &"]".repeat(n);
        assert!(parse(&deep(3), 3).is_some());
        assert!(parse(&deep(4), 3).is_none());
        assert!(parse(&deep(100_000), 128).is_none());
    }

    #[test]
    fn long_integers_round_like_js() {
        assert_eq!(p("9007199254740993"), Some(Value::Number(9007199254740992.0)));
        assert_eq!(p("123456789012345"), Some(Value::Number(123456789012345.0)));
    }
}
