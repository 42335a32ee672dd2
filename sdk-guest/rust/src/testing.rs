//! Testing a projection natively, as plain Rust (`cargo test`): build
//! events, fold them through a [`Projection`] the way the host folds a
//! batch into an empty read model, and compare the rows with the expected
//! ones, with a readable difference.
//!
//! ```ignore
//! #[test]
//! fn prices_sum_exactly() {
//!     testing::check(&OrderSummaries, &[
//!         Ev::new("Order", "o-1", 1, "OrderPlaced").s("customer", "Ada"),
//!         Ev::new("Order", "o-1", 2, "ItemAdded").n("price", "0.1"),
//!     ], &[testing::row(&[("pk", "OrderSummary#o-1"), ("sk", "OrderSummary")])
//!         .s("status", "placed").n("total", "0.1").build()]);
//! }
//! ```
//!
//! The same [`Case`]s ship inside the Wasm module as its self test
//! (`export!(P, self_test = cases)`): the host runs them before it accepts
//! the module. The fold goes through the very code the module runs: the
//! requests are encoded, answered by the exports' functions and decoded.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::fields::{encode_fields, Fields};
use crate::fold::{call, Export};
use crate::projection::{Error, Projection};
use crate::value::{encode_opt_item, read_opt_item, read_value, Item, Value};
use crate::wire::{put_str, put_uvarint, Reader};

/// The timestamp events get unless [`Ev::at`] sets one.
pub const TIMESTAMP: &str = "2026-01-01T00:00:00Z";

/// An event for a test.
#[derive(Clone, Debug, PartialEq)]
pub struct Ev {
    /// The source that reads it; "" for the first source reading its stream.
    pub source: String,
    /// The stream's name.
    pub stream: String,
    /// The stream instance.
    pub stream_id: String,
    /// The version, from 1.
    pub version: u64,
    /// The event type.
    pub event_type: String,
    /// The data (with `_tag`, as the event store writes it).
    pub data: Item,
    /// The metadata, if any.
    pub metadata: Option<Item>,
    /// ISO-8601.
    pub timestamp: String,
}

impl Ev {
    /// Version `version` of stream instance `stream_id` of `stream`, of
    /// type `event_type`, with data `{_tag: event_type}`.
    pub fn new(stream: &str, stream_id: &str, version: u64, event_type: &str) -> Ev {
        let mut data = Item::new();
        data.insert("_tag".into(), Value::s(event_type));
        Ev {
            source: String::new(),
            stream: stream.into(),
            stream_id: stream_id.into(),
            version,
            event_type: event_type.into(),
            data,
            metadata: None,
            timestamp: TIMESTAMP.into(),
        }
    }

    /// With data attribute `name` = S `v`.
    pub fn s(self, name: &str, v: &str) -> Ev {
        self.value(name, Value::s(v))
    }

    /// With data attribute `name` = N `text`.
    pub fn n(self, name: &str, text: &str) -> Ev {
        self.value(name, Value::n(text))
    }

    /// With data attribute `name` = N of an integer.
    pub fn int(self, name: &str, v: i64) -> Ev {
        self.value(name, Value::n(v.to_string()))
    }

    /// With data attribute `name` = BOOL `v`.
    pub fn bool(self, name: &str, v: bool) -> Ev {
        self.value(name, Value::Bool(v))
    }

    /// With data attribute `name` = `v`.
    pub fn value(mut self, name: &str, v: Value) -> Ev {
        self.data.insert(name.into(), v);
        self
    }

    /// With the attributes of a struct in the data.
    pub fn fields<T: Fields>(mut self, v: &T) -> Ev {
        if let Some(it) = item_of(v) {
            for (k, x) in it {
                self.data.insert(k, x);
            }
        }
        self
    }

    /// Read by the named source.
    pub fn from(mut self, source: &str) -> Ev {
        self.source = source.into();
        self
    }

    /// With an ISO-8601 timestamp.
    pub fn at(mut self, timestamp: &str) -> Ev {
        self.timestamp = timestamp.into();
        self
    }

    /// With metadata.
    pub fn metadata(mut self, m: Item) -> Ev {
        self.metadata = Some(m);
        self
    }

    /// Appends the Event record (ABI.md §3.3).
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_str(out, &self.stream);
        put_str(out, &self.stream_id);
        put_uvarint(out, self.version);
        put_str(out, &self.event_type);
        sized(out, Some(&self.data));
        sized(out, self.metadata.as_ref());
        put_str(out, &self.timestamp);
    }
}

fn sized(out: &mut Vec<u8>, it: Option<&Item>) {
    let mut b = Vec::new();
    encode_opt_item(&mut b, it);
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(&b);
}

fn item_of<T: Fields>(v: &T) -> Option<Item> {
    let mut b = Vec::new();
    encode_fields(&mut b, v).ok()?;
    let mut r = Reader::new(&b);
    read_opt_item(&mut r)
}

/// Builds an expected row: its key attributes, then its other attributes.
pub struct RowBuilder(Item);

/// An expected row with key `key` (`[("pk", "..."), ("sk", "...")]`, S
/// attributes).
pub fn row(key: &[(&str, &str)]) -> RowBuilder {
    RowBuilder(string_key(key))
}

/// A key of S attributes.
pub fn string_key(pairs: &[(&str, &str)]) -> Item {
    pairs.iter().map(|(k, v)| (k.to_string(), Value::s(*v))).collect()
}

impl RowBuilder {
    /// With S attribute `name`.
    pub fn s(self, name: &str, v: &str) -> Self {
        self.value(name, Value::s(v))
    }
    /// With N attribute `name` (its text as DynamoDB returns it: plain,
    /// no trailing zeros).
    pub fn n(self, name: &str, text: &str) -> Self {
        self.value(name, Value::n(text))
    }
    /// With N attribute `name` of an integer.
    pub fn int(self, name: &str, v: i64) -> Self {
        self.value(name, Value::n(v.to_string()))
    }
    /// With BOOL attribute `name`.
    pub fn bool(self, name: &str, v: bool) -> Self {
        self.value(name, Value::Bool(v))
    }
    /// With attribute `name`.
    pub fn value(mut self, name: &str, v: Value) -> Self {
        self.0.insert(name.into(), v);
        self
    }
    /// With the attributes of a struct (a state, as to_item stores it by
    /// default).
    pub fn fields<T: Fields>(mut self, v: &T) -> Self {
        if let Some(it) = item_of(v) {
            for (k, x) in it {
                self.0.insert(k, x);
            }
        }
        self
    }
    /// The row.
    pub fn build(self) -> Item {
        self.0
    }
}

impl From<RowBuilder> for Item {
    fn from(b: RowBuilder) -> Item {
        b.0
    }
}

/// The outcome of one event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// 1 Applied, 2 Skipped, 3 Rejected, 4 Failed.
    pub outcome: u8,
    /// Applied with removeRow.
    pub remove: bool,
    /// Set for Rejected and Failed.
    pub error: Option<Error>,
    /// The outbox effects of an applied event.
    pub effects: Vec<Value>,
}

/// One row after a fold: its key, the item as the host would store it (the
/// key's attributes plus to_item's; `None` when the row does not exist
/// after the fold), the decisions of its events, and what failed it.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The row's key.
    pub key: Item,
    /// The stored item.
    pub item: Option<Item>,
    /// The decisions of the last evolve call.
    pub decisions: Vec<Decision>,
    /// The failure: "Type vN: Tag: message", or a panic.
    pub error: Option<String>,
}

fn call_native<P: Projection>(p: &P, e: Export, input: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    match catch_unwind(AssertUnwindSafe(|| call(p, e, input, &mut out, false))) {
        Ok(Ok(())) => Ok(out),
        Ok(Err(m)) => Err(m),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            Err(format!("{}: panic: {}", e.name(), msg))
        }
    }
}

/// Renders a key as the host's messages do: `pk=a,sk=b`, names sorted.
pub fn key_string(k: &Item) -> String {
    k.iter()
        .map(|(n, v)| {
            let t = match v {
                Value::S(s) | Value::N(s) => s.as_str(),
                _ => "",
            };
            format!("{}={}", n, t)
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Folds `events` through `p` from an empty read model, as the host folds
/// one batch: each event's key, then each row's events in fold order
/// (sources in declaration order, then stream id, then version;
/// duplicates folded once) in one evolve. A failed event fails its row (in
/// a multi-source projection, that source instance's events are dropped
/// and the others still fold, as the host does). Rows are sorted by key.
/// The error is a key that failed or an event no source reads.
pub fn fold<P: Projection>(p: &P, events: &[Ev]) -> Result<Vec<Row>, String> {
    let d = P::DESCRIPTION;
    let order = |name: &str| d.sources.iter().position(|s| s.name == name);
    let mut rows: BTreeMap<String, (Item, Vec<(usize, String, Ev)>)> = BTreeMap::new();
    let mut seen = std::collections::BTreeSet::new();
    for e in events {
        let src = if e.source.is_empty() {
            d.sources.iter().find(|s| s.stream == e.stream).map(|s| s.name.to_string()).unwrap_or_default()
        } else {
            e.source.clone()
        };
        let ord = order(&src).ok_or_else(|| format!("testing: {} {} v{}: no source of {} reads it", e.stream, e.stream_id, e.version, d.name))?;
        if !seen.insert((src.clone(), e.stream_id.clone(), e.version)) {
            continue; // at least once: the host folds a duplicate once
        }
        let mut q = Vec::new();
        put_str(&mut q, &src);
        put_uvarint(&mut q, 1);
        e.encode(&mut q);
        let out = call_native(p, Export::Key, &q).map_err(|m| format!("testing: key of {} {} v{}: {}", e.stream, e.stream_id, e.version, m))?;
        let mut r = Reader::new(&out);
        let n = r.uvarint();
        let key = read_opt_item(&mut r);
        let err = read_opt_error(&mut r);
        if n != 1 || !r.ok() {
            return Err(format!("testing: key of {} {} v{}: bad response", e.stream, e.stream_id, e.version));
        }
        if let Some(err) = err {
            return Err(format!("testing: key of {} {} v{}: {}: {}", e.stream, e.stream_id, e.version, err.tag, err.message));
        }
        let key = match key {
            Some(k) => k,
            None => continue, // the event addresses no row
        };
        let ks = key_string(&key);
        rows.entry(ks).or_insert_with(|| (key, Vec::new())).1.push((ord, src, e.clone()));
    }
    let mut out = Vec::new();
    for (_, (key, mut evs)) in rows {
        evs.sort_by(|a, b| (a.0, &a.2.stream_id, a.2.version).cmp(&(b.0, &b.2.stream_id, b.2.version)));
        out.push(evolve_row(p, d.single, key, evs)?);
    }
    Ok(out)
}

fn read_opt_error(r: &mut Reader<'_>) -> Option<Error> {
    if !r.bool() {
        return None;
    }
    let tag = String::from_utf8_lossy(r.bytes()).into_owned();
    let message = String::from_utf8_lossy(r.bytes()).into_owned();
    Some(Error { tag, message })
}

fn evolve_row<P: Projection>(p: &P, single: bool, key: Item, mut evs: Vec<(usize, String, Ev)>) -> Result<Row, String> {
    let mut row = Row { key, item: None, decisions: Vec::new(), error: None };
    let mut failed = Vec::new();
    while !evs.is_empty() {
        let mut q = Vec::new();
        let mut k = Vec::new();
        encode_opt_item(&mut k, Some(&row.key));
        q.extend_from_slice(&(k.len() as u32).to_le_bytes());
        q.extend_from_slice(&k);
        put_str(&mut q, if single { &evs[0].2.stream_id } else { "" });
        q.extend_from_slice(&1u32.to_le_bytes());
        q.push(0); // no state: an empty read model
        put_uvarint(&mut q, evs.len() as u64);
        for (_, src, e) in &evs {
            put_str(&mut q, src);
            e.encode(&mut q);
        }
        let out = match call_native(p, Export::Evolve, &q) {
            Ok(out) => out,
            Err(m) => {
                failed.push(m);
                break;
            }
        };
        let mut r = Reader::new(&out);
        row.decisions.clear();
        loop {
            let o = r.byte();
            if o == 0 || !r.ok() {
                break;
            }
            let remove = r.bool();
            let error = read_opt_error(&mut r);
            let n = r.count(1);
            let mut effects = Vec::new();
            for _ in 0..n {
                if let Some(v) = read_value(&mut r, 0) {
                    effects.push(v);
                }
            }
            row.decisions.push(Decision { outcome: o, remove, error, effects });
        }
        let state = read_opt_item(&mut r);
        let _removed = r.bool();
        let item = read_opt_item(&mut r);
        if let Some(err) = r.err() {
            return Err(format!("testing: evolve of row {}: response: {}", key_string(&row.key), err));
        }
        match row.decisions.last() {
            Some(last) if last.outcome == 4 => {
                let i = row.decisions.len() - 1;
                let bad = evs[i].clone();
                let e = last.error.clone().unwrap_or_else(|| Error::new("", ""));
                failed.push(format!("{} v{}: {}: {}", bad.2.event_type, bad.2.version, e.tag, e.message));
                if single {
                    break; // the row fails: nothing is written
                }
                evs.retain(|x| !(x.1 == bad.1 && x.2.stream_id == bad.2.stream_id));
            }
            _ => {
                if state.is_some() {
                    let mut it = item.unwrap_or_default();
                    for (k, v) in &row.key {
                        it.insert(k.clone(), v.clone());
                    }
                    row.item = Some(it);
                }
                break;
            }
        }
    }
    if !failed.is_empty() {
        row.error = Some(failed.join("; "));
    }
    Ok(row)
}

fn render_value(v: &Value) -> String {
    match v {
        Value::S(s) => format!("{:?}", s),
        Value::N(n) => n.clone(),
        Value::M(m) => render(m),
        Value::Bool(b) => b.to_string(),
        Value::Null => "NULL".into(),
        other => format!("{:?}", other),
    }
}

fn render(it: &Item) -> String {
    let parts: Vec<String> = it.iter().map(|(k, v)| format!("{}: {}", k, render_value(v))).collect();
    format!("{{{}}}", parts.join(", "))
}

/// Compares folded rows with expected items (key attributes included),
/// matching them by key: one line per missing, unexpected, failed or
/// different row and attribute, "" when they agree.
pub fn diff(got: &[Row], want: &[Item]) -> String {
    let mut lines = Vec::new();
    let mut matched = std::collections::BTreeSet::new();
    for (i, w) in want.iter().enumerate() {
        let r = got.iter().find(|r| r.key.iter().all(|(k, v)| w.get(k) == Some(v)));
        let r = match r {
            Some(r) => r,
            None => {
                lines.push(format!("row {} ({}): expected, but no event folds into it", i, render(w)));
                continue;
            }
        };
        let ks = key_string(&r.key);
        matched.insert(ks.clone());
        match (&r.error, &r.item) {
            (Some(e), _) => lines.push(format!("row {}: failed: {}", ks, e)),
            (None, None) => lines.push(format!("row {}: expected, but the fold leaves it absent", ks)),
            (None, Some(it)) => {
                for (k, v) in w {
                    match it.get(k) {
                        None => lines.push(format!("row {}: {}: missing, want {}", ks, k, render_value(v))),
                        Some(g) if g != v => lines.push(format!("row {}: {}: got {}, want {}", ks, k, render_value(g), render_value(v))),
                        _ => {}
                    }
                }
                for (k, v) in it {
                    if !w.contains_key(k) {
                        lines.push(format!("row {}: {}: unexpected {}", ks, k, render_value(v)));
                    }
                }
            }
        }
    }
    for r in got {
        let ks = key_string(&r.key);
        if matched.contains(&ks) {
            continue;
        }
        if let Some(e) = &r.error {
            lines.push(format!("row {}: not expected, and failed: {}", ks, e));
        } else if let Some(it) = &r.item {
            lines.push(format!("row {}: not expected, got {}", ks, render(it)));
        }
    }
    lines.join("\n")
}

/// Folds `events` through `p` and panics with every difference from
/// `want` (for `#[test]` functions); returns the rows.
pub fn check<P: Projection>(p: &P, events: &[Ev], want: &[Item]) -> Vec<Row> {
    let got = match fold(p, events) {
        Ok(g) => g,
        Err(e) => panic!("fold: {}", e),
    };
    let d = diff(&got, want);
    if !d.is_empty() {
        panic!("rows differ:\n{}", d);
    }
    got
}

/// A named test of a projection: events and the rows they give. Run it
/// natively ([`Case::check`]) and ship it in the module as its self test.
#[derive(Clone, Debug)]
pub struct Case {
    /// The case's name.
    pub name: String,
    /// The events.
    pub events: Vec<Ev>,
    /// The rows, built with [`row`].
    pub want: Vec<Item>,
}

impl Case {
    /// A case.
    pub fn new(name: &str, events: Vec<Ev>, want: Vec<Item>) -> Case {
        Case { name: name.into(), events, want }
    }

    /// Folds the case's events through `p`: the differences from `want`
    /// as an error.
    pub fn check<P: Projection>(&self, p: &P) -> Result<(), String> {
        let got = fold(p, &self.events)?;
        let d = diff(&got, &self.want);
        if d.is_empty() {
            Ok(())
        } else {
            Err(d)
        }
    }
}

/// Runs cases: one message per failure ("name: what differs").
pub fn run_cases<P: Projection>(p: &P, cases: &[Case]) -> Vec<String> {
    cases.iter().filter_map(|c| c.check(p).err().map(|e| format!("{}: {}", c.name, e))).collect()
}
