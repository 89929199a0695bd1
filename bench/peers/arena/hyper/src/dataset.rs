//! The arena dataset (docs/arena.md §5): read once at start, serialised per request.
//!
//! Debian's crate registry has serde and serde_derive but not serde_json, so this is
//! the small hand-written stand-in: a JSON reader for the dataset file (any valid
//! JSON; the items must carry the documented keys) and a writer for the answer,
//! with a real string escaper.

use std::fmt::Write as _;

/// One dataset item: exactly the keys of docs/arena.md §5.
#[derive(Debug, Clone)]
pub struct Item {
    pub id: i64,
    pub name: String,
    pub category: String,
    pub price: i64,
    pub quantity: i64,
    pub active: bool,
    pub tags: Vec<String>,
    pub rating_score: i64,
    pub rating_count: i64,
}

/// A parsed JSON value (numbers: integers only; the dataset has no floats).
#[derive(Debug, Clone)]
enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Str(String),
    Arr(Vec<Value>),
    Obj(Vec<(String, Value)>),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at byte {}", self.i))
    }
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> Result<(), String> {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            Ok(())
        } else {
            self.err(&format!("expected '{}'", c as char))
        }
    }
    fn lit(&mut self, word: &str, v: Value) -> Result<Value, String> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            self.err("bad literal")
        }
    }
    fn value(&mut self) -> Result<Value, String> {
        self.ws();
        match self.s.get(self.i) {
            None => self.err("unexpected end"),
            Some(b'{') => {
                self.i += 1;
                let mut fields = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Value::Obj(fields));
                }
                loop {
                    self.ws();
                    let k = self.string()?;
                    self.eat(b':')?;
                    fields.push((k, self.value()?));
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Value::Obj(fields));
                        }
                        _ => return self.err("expected ',' or '}'"),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Value::Arr(items));
                }
                loop {
                    items.push(self.value()?);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Value::Arr(items));
                        }
                        _ => return self.err("expected ',' or ']'"),
                    }
                }
            }
            Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b't') => self.lit("true", Value::Bool(true)),
            Some(b'f') => self.lit("false", Value::Bool(false)),
            Some(b'n') => self.lit("null", Value::Null),
            Some(_) => self.number(),
        }
    }
    fn number(&mut self) -> Result<Value, String> {
        let start = self.i;
        if self.s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
            self.i += 1;
        }
        if matches!(self.s.get(self.i), Some(b'.' | b'e' | b'E')) {
            return self.err("non-integer number (the dataset has integers only)");
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).unwrap();
        match text.parse::<i64>() {
            Ok(n) => Ok(Value::Int(n)),
            Err(_) => {
                self.i = start;
                self.err("bad number")
            }
        }
    }
    fn hex4(&mut self) -> Result<u32, String> {
        let h = self.s.get(self.i..self.i + 4).ok_or("short \\u escape")?;
        let n = u32::from_str_radix(std::str::from_utf8(h).map_err(|e| e.to_string())?, 16)
            .map_err(|e| e.to_string())?;
        self.i += 4;
        Ok(n)
    }
    fn string(&mut self) -> Result<String, String> {
        if self.s.get(self.i) != Some(&b'"') {
            return self.err("expected string");
        }
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = match self.s.get(self.i) {
                None => return self.err("unterminated string"),
                Some(&c) => c,
            };
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = *self.s.get(self.i).ok_or("unterminated escape")?;
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xD800..0xDC00).contains(&cp) && self.s[self.i..].starts_with(b"\\u") {
                                self.i += 2;
                                let lo = self.hex4()?;
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF);
                            }
                            char::from_u32(cp).unwrap_or('\u{FFFD}')
                        }
                        _ => return self.err("bad escape"),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                c => out.push(c),
            }
        }
        String::from_utf8(out).map_err(|e| e.to_string())
    }
}

fn field<'v>(obj: &'v [(String, Value)], key: &str) -> Result<&'v Value, String> {
    obj.iter().find(|(k, _)| k == key).map(|(_, v)| v).ok_or(format!("item without \"{key}\""))
}
fn int(obj: &[(String, Value)], key: &str) -> Result<i64, String> {
    match field(obj, key)? {
        Value::Int(n) => Ok(*n),
        _ => Err(format!("\"{key}\" is not an integer")),
    }
}
fn string(obj: &[(String, Value)], key: &str) -> Result<String, String> {
    match field(obj, key)? {
        Value::Str(s) => Ok(s.clone()),
        _ => Err(format!("\"{key}\" is not a string")),
    }
}

/// Parses DIR/dataset.json's text: a JSON array of items.
pub fn parse(text: &str) -> Result<Vec<Item>, String> {
    let mut p = Parser { s: text.as_bytes(), i: 0 };
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return p.err("trailing data");
    }
    let items = match v {
        Value::Arr(items) => items,
        _ => return Err("not a JSON array".into()),
    };
    items
        .iter()
        .map(|it| {
            let o = match it {
                Value::Obj(o) => o,
                _ => return Err("item is not an object".to_string()),
            };
            let tags = match field(o, "tags")? {
                Value::Arr(t) => t
                    .iter()
                    .map(|x| match x {
                        Value::Str(s) => Ok(s.clone()),
                        _ => Err("a tag is not a string".to_string()),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                _ => return Err("\"tags\" is not an array".into()),
            };
            let rating = match field(o, "rating")? {
                Value::Obj(r) => r,
                _ => return Err("\"rating\" is not an object".into()),
            };
            let active = match field(o, "active")? {
                Value::Bool(b) => *b,
                _ => return Err("\"active\" is not a boolean".into()),
            };
            Ok(Item {
                id: int(o, "id")?,
                name: string(o, "name")?,
                category: string(o, "category")?,
                price: int(o, "price")?,
                quantity: int(o, "quantity")?,
                active,
                tags,
                rating_score: int(rating, "score")?,
                rating_count: int(rating, "count")?,
            })
        })
        .collect()
}

/// Appends `s` as a JSON string literal (quotes, backslashes and control characters
/// escaped; everything else, UTF-8 included, as is — what serde_json writes).
fn write_str(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            let _ = write!(out, "\\u{:04x}", b);
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// `{"items":[...],"count":n}` for the first n items, each with all its fields and
/// `total = price*quantity*m`; built anew on every call.
pub fn render(items: &[Item], m: i64) -> String {
    let mut out = String::with_capacity(64 + items.len() * 220);
    out.push_str("{\"items\":[");
    for (k, it) in items.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        let _ = write!(out, "{{\"id\":{},\"name\":", it.id);
        write_str(&mut out, &it.name);
        out.push_str(",\"category\":");
        write_str(&mut out, &it.category);
        let _ = write!(
            out,
            ",\"price\":{},\"quantity\":{},\"active\":{},\"tags\":[",
            it.price, it.quantity, it.active
        );
        for (j, t) in it.tags.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            write_str(&mut out, t);
        }
        let total = it.price.wrapping_mul(it.quantity).wrapping_mul(m);
        let _ = write!(
            out,
            "],\"rating\":{{\"score\":{},\"count\":{}}},\"total\":{}}}",
            it.rating_score, it.rating_count, total
        );
    }
    let _ = write!(out, "],\"count\":{}}}", items.len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let text = r#"[{"id": 1, "name": "A \"q\" \u00e9", "category": "tools", "price": 3,
            "quantity": 4, "active": false, "tags": ["x"], "rating": {"score": 5, "count": 6}}]"#;
        let items = parse(text).unwrap();
        assert_eq!(items[0].name, "A \"q\" é");
        assert_eq!(
            render(&items, 2),
            r#"{"items":[{"id":1,"name":"A \"q\" é","category":"tools","price":3,"quantity":4,"active":false,"tags":["x"],"rating":{"score":5,"count":6},"total":24}],"count":1}"#
        );
    }
}
