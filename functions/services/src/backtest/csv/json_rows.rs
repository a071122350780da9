//! `csv_data` as JSON rows, read into columns as the body streams past: no
//! `Value` tree of the rows is ever built, keys are matched without
//! allocating, and a cell's path is written only when the cell is refused.

use super::{Cells, Collector, at, bounded, column, day, from_csv_text, numeric_text};
use crate::backtest::params::{FieldError, Result};
use platform::uploads::Upload;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// A JSON body split as it is read: `csv_data` straight into columns, every
/// other field kept as a `Value`.
pub struct SplitBody {
    /// The body without `csv_data`.
    pub rest: Value,
    /// `csv_data` read, or what is wrong with it (`None`: absent or null).
    pub upload: Option<Result<Upload>>,
}

/// Reads a JSON object body; `Err` only for text that is not JSON (the
/// caller names the parse error), never for bad rows.
pub fn split_json(body: &[u8]) -> std::result::Result<SplitBody, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let split = de::Deserializer::deserialize_map(&mut de, BodyVisitor)?;
    de.end()?;
    Ok(split)
}

/// `csv_data` given as a JSON value (a stored task of an older version, or
/// a body already parsed).
pub fn from_value(v: &Value) -> Result<Upload> {
    match RowsSeed.deserialize(v) {
        Ok(Some(r)) => r,
        Ok(None) => Err(FieldError::required("csv_data")),
        Err(e) => Err(FieldError::new("csv_data", e.to_string())),
    }
}

struct BodyVisitor;

impl<'de> Visitor<'de> for BodyVisitor {
    type Value = SplitBody;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> std::result::Result<SplitBody, A::Error> {
        let mut rest = Map::new();
        let mut upload = None;
        while let Some(k) = m.next_key::<String>()? {
            if k == "csv_data" {
                upload = m.next_value_seed(RowsSeed)?;
            } else {
                let v: Value = m.next_value()?;
                rest.insert(k, v);
            }
        }
        Ok(SplitBody {
            rest: Value::Object(rest),
            upload,
        })
    }
}

/// `csv_data`: an array of row objects, or CSV text in one string.
struct RowsSeed;

impl<'de> DeserializeSeed<'de> for RowsSeed {
    type Value = Option<Result<Upload>>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(RowsVisitor)
    }
}

struct RowsVisitor;

fn not_rows<E>(got: &str) -> std::result::Result<Option<Result<Upload>>, E> {
    Ok(Some(Err(FieldError::new(
        "csv_data",
        format!("expected an array of row objects or CSV text, got {got}"),
    ))))
}

impl<'de> Visitor<'de> for RowsVisitor {
    type Value = Option<Result<Upload>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of row objects or CSV text")
    }

    fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_bool<E>(self, v: bool) -> std::result::Result<Self::Value, E> {
        not_rows(&v.to_string())
    }

    fn visit_i64<E>(self, v: i64) -> std::result::Result<Self::Value, E> {
        not_rows(&v.to_string())
    }

    fn visit_u64<E>(self, v: u64) -> std::result::Result<Self::Value, E> {
        not_rows(&v.to_string())
    }

    fn visit_f64<E>(self, v: f64) -> std::result::Result<Self::Value, E> {
        not_rows(&v.to_string())
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Self::Value, E> {
        Ok(Some(from_csv_text(v.as_bytes())))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> std::result::Result<Self::Value, A::Error> {
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        not_rows("an object")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> std::result::Result<Self::Value, A::Error> {
        let mut rows = Collector::default();
        let mut i = 0;
        loop {
            match s.next_element_seed(RowSeed { i, into: &mut rows })? {
                None => break,
                Some(Ok(())) => i += 1,
                Some(Err(e)) => {
                    // The first mistake is the answer; the rest is skipped.
                    while s.next_element::<IgnoredAny>()?.is_some() {}
                    return Ok(Some(Err(e)));
                }
            }
        }
        Ok(Some(rows.finish()))
    }
}

/// One row object, checked and appended as soon as it closes.
struct RowSeed<'a> {
    i: usize,
    into: &'a mut Collector,
}

impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
    type Value = Result<()>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl RowSeed<'_> {
    fn not_object(&self) -> Result<()> {
        Err(FieldError::new(
            format!("csv_data[{}]", self.i),
            "expected an object",
        ))
    }
}

impl<'de> Visitor<'de> for RowSeed<'_> {
    type Value = Result<()>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a row object")
    }

    fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(self.not_object())
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Self::Value, E> {
        Ok(self.not_object())
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Self::Value, E> {
        Ok(self.not_object())
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<Self::Value, E> {
        Ok(self.not_object())
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<Self::Value, E> {
        Ok(self.not_object())
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<Self::Value, E> {
        Ok(self.not_object())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> std::result::Result<Self::Value, A::Error> {
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(self.not_object())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> std::result::Result<Self::Value, A::Error> {
        let mut cells = Cells::new();
        let mut wrong = None;
        while let Some(key) = m.next_key_seed(KeySeed)? {
            let Some(c) = key else {
                m.next_value::<IgnoredAny>()?;
                continue;
            };
            let cell = m.next_value_seed(CellSeed)?;
            if wrong.is_some() {
                continue;
            }
            let read = match (c, cell) {
                (_, Sent::Null) if c > 5 => Ok(()),
                (0, Sent::Text(s)) => day(&s).map(|d| cells.date = Some(d)),
                (0, other) => Err(format!("expected a date as text, got {}", other.shown())),
                (_, Sent::Number(x)) => bounded(x, &x).map(|x| cells.values[c - 1] = Some(x)),
                (_, Sent::Text(s)) => numeric_text(&s).map(|x| cells.values[c - 1] = Some(x)),
                (_, other) => Err(format!(
                    "expected a number or a numeric string, got {}",
                    other.shown()
                )),
            };
            if let Err(why) = read {
                wrong = Some(FieldError::new(at(self.i, c), why));
            }
        }
        if let Some(e) = wrong {
            return Ok(Err(e));
        }
        Ok(cells.finish(self.i, self.into))
    }
}

/// A row object's key as the index of the column it names, read without
/// allocating.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Option<usize>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a column name")
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Self::Value, E> {
        Ok(column(v))
    }
}

/// One cell as sent.
enum Sent<'de> {
    Number(f64),
    Text(std::borrow::Cow<'de, str>),
    Null,
    Other(&'static str),
}

impl Sent<'_> {
    fn shown(&self) -> String {
        match self {
            Sent::Number(x) => x.to_string(),
            Sent::Text(s) => format!("'{s}'"),
            Sent::Null => "null".into(),
            Sent::Other(what) => (*what).into(),
        }
    }
}

struct CellSeed;

impl<'de> DeserializeSeed<'de> for CellSeed {
    type Value = Sent<'de>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(CellVisitor)
    }
}

struct CellVisitor;

impl<'de> Visitor<'de> for CellVisitor {
    type Value = Sent<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number or text")
    }
    fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(Sent::Null)
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<Self::Value, E> {
        Ok(Sent::Other(if v { "true" } else { "false" }))
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<Self::Value, E> {
        Ok(Sent::Number(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Self::Value, E> {
        Ok(Sent::Number(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<Self::Value, E> {
        Ok(Sent::Number(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> std::result::Result<Self::Value, E> {
        Ok(Sent::Text(std::borrow::Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Self::Value, E> {
        Ok(Sent::Text(std::borrow::Cow::Owned(v.to_string())))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> std::result::Result<Self::Value, A::Error> {
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Sent::Other("an array"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> std::result::Result<Self::Value, A::Error> {
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Sent::Other("an object"))
    }
}
