//! The exports on encoded messages (ABI.md §3.4, §4): each reads a request
//! and appends the response to `out`; an `Err` is a guest-level failure
//! (status 1), not a domain error. The Wasm glue ([`export!`](crate::export!))
//! and the native test harness ([`testing`](crate::testing)) both call them.

use crate::event::Event;
use crate::fields::{decode_into, decode_state_as_read, encode_fields, Attrs, Effects};
use crate::projection::{Context, Description, Error, Projection, Source, Step};
use crate::text::quote;
use crate::wire::{put_str, put_strs, put_uvarint, Reader};

/// ABI version of the SDK: 1.2.
pub const ABI_MAJOR: u32 = 1;
/// Minor ABI version.
pub const ABI_MINOR: u32 = 2;

/// The exports a plugin answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Export {
    /// describe
    Describe,
    /// key
    Key,
    /// evolve
    Evolve,
    /// initial
    Initial,
    /// terminal
    Terminal,
    /// to_item
    ToItem,
    /// effects
    Effects,
}

impl Export {
    /// The export's name.
    pub fn name(self) -> &'static str {
        match self {
            Export::Describe => "describe",
            Export::Key => "key",
            Export::Evolve => "evolve",
            Export::Initial => "initial",
            Export::Terminal => "terminal",
            Export::ToItem => "to_item",
            Export::Effects => "effects",
        }
    }

    /// The export named `name`.
    pub fn by_name(name: &str) -> Option<Export> {
        [Export::Describe, Export::Key, Export::Evolve, Export::Initial, Export::Terminal, Export::ToItem, Export::Effects]
            .into_iter()
            .find(|e| e.name() == name)
    }
}

const OUTCOME_APPLIED: u8 = 1;
const OUTCOME_SKIPPED: u8 = 2;
const OUTCOME_REJECTED: u8 = 3;
const OUTCOME_FAILED: u8 = 4;

/// Runs export `e` of `p` on request `input`, appending the response to
/// `out`. `self_test` adds that capability to describe's list.
pub fn call<P: Projection>(p: &P, e: Export, input: &[u8], out: &mut Vec<u8>, self_test: bool) -> Result<(), String> {
    let r = match e {
        Export::Describe => {
            describe::<P>(out, self_test);
            Ok(())
        }
        Export::Key => key(p, input, out),
        Export::Evolve => evolve(p, input, out),
        Export::Initial => initial(p, input, out),
        Export::Terminal => terminal(p, input, out),
        Export::ToItem => to_item(p, input, out),
        Export::Effects => effects(p, input, out),
    };
    r.map_err(|m| format!("{}: {}", e.name(), m))
}

fn describe<P: Projection>(out: &mut Vec<u8>, self_test: bool) {
    let d = P::DESCRIPTION;
    put_str(out, d.name);
    put_str(out, d.version);
    put_uvarint(out, ABI_MAJOR as u64);
    put_uvarint(out, ABI_MINOR as u64);
    put_uvarint(out, d.sources.len() as u64);
    for s in d.sources {
        put_str(out, s.name);
        put_str(out, s.stream);
        put_strs(out, s.event_types);
        put_str(out, s.mode.as_str());
    }
    let caps = ["describe", "key", "evolve", "initial", "terminal", "to_item", "effects", "self_test"];
    put_strs(out, &caps[..if self_test { 8 } else { 7 }]);
    let declared = d.sources.iter().filter(|s| !s.composite.is_empty()).count();
    if declared > 0 {
        put_uvarint(out, declared as u64);
        for s in d.sources.iter().filter(|s| !s.composite.is_empty()) {
            put_str(out, s.name);
            put_strs(out, s.composite);
        }
    }
}

/// Whether a and b are equal, without the call to memcmp that == makes
/// (see bytes.rs).
#[inline(always)]
pub(crate) fn eq_bytes(a: &[u8], b: &[u8]) -> bool {
    crate::bytes::eq(a, b)
}

/// The source named `name`; a single-source projection also answers to "".
#[inline]
fn source<P: Projection>(name: &[u8]) -> Result<&'static Source, String> {
    let d: &'static Description = &P::DESCRIPTION;
    if d.single && (name.is_empty() || eq_bytes(name, d.sources[0].name.as_bytes())) {
        return Ok(&d.sources[0]);
    }
    for s in d.sources {
        if eq_bytes(s.name.as_bytes(), name) {
            return Ok(s);
        }
    }
    no_source::<P>(name)
}

#[cold]
fn no_source<P: Projection>(name: &[u8]) -> Result<&'static Source, String> {
    Err(format!("guest: projection {} has no source {}", quote(P::DESCRIPTION.name.as_bytes()), quote(name)))
}

fn utf8(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap_or("")
}

fn put_error(out: &mut Vec<u8>, e: &Error) {
    out.push(1);
    put_str(out, &e.tag);
    put_str(out, &e.message);
}

fn key<P: Projection>(p: &P, input: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let mut r = Reader::new(input);
    let src = source::<P>(r.bytes())?;
    let n = r.count(12);
    put_uvarint(out, n as u64);
    for _ in 0..n {
        let e = Event::read(&mut r, src.composite);
        if !r.ok() {
            break;
        }
        let ctx = Context { source: src.name, stream_id: e.stream_id(), key: &[], composite: src.composite };
        let mut k = Attrs::optional(out);
        match p.key(&e, &ctx, &mut k) {
            Ok(true) => {
                k.finish().map_err(|m| format!("guest: key of {} v{}: {}", e.stream_id(), e.version(), m))?;
                out.push(0);
            }
            Ok(false) => {
                k.discard();
                out.extend_from_slice(&[0, 0]);
            }
            Err(err) => {
                k.discard();
                out.push(0);
                put_error(out, &err);
            }
        }
    }
    if let Some(err) = r.err() {
        return Err(format!("guest: key request: {}", err));
    }
    Ok(())
}

/// The state of one run: the row's state st[at] (the next one is built in
/// the other slot), whether it exists, whether the run removed it.
struct Run<S> {
    st: [S; 2],
    at: usize,
    present: bool,
    removed: bool,
}

impl<S: Clone> Run<S> {
    /// The state, and the other slot (a copy of it for evolve to change).
    #[inline]
    fn slots(&mut self) -> (&mut S, &mut S) {
        let (a, b) = self.st.split_at_mut(1);
        if self.at == 0 {
            (&mut a[0], &mut b[0])
        } else {
            (&mut b[0], &mut a[0])
        }
    }
}

fn evolve<P: Projection>(p: &P, input: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let d: &'static Description = &P::DESCRIPTION;
    let mut r = Reader::new(input);
    let key = r.sized();
    let mut stream_id = r.bytes();
    let state = r.sized();
    let n = r.count(13);
    if key.is_empty() || state.is_empty() {
        r.fail("evolve request: key or state missing");
    }
    if let Some(err) = r.err() {
        return Err(format!("guest: evolve request: {}", err));
    }
    let mut run = Run { st: [P::State::default(), P::State::default()], at: 0, present: state[0] != 0, removed: false };
    if run.present {
        decode_state_as_read(&mut run.st[0], state).map_err(|m| format!("guest: state as read: {}", m))?;
    }
    let mut end = None; // the offset after the last event, once all were read
    for i in 0..n {
        let name = r.bytes();
        let mut e = Event::read(&mut r, &[]);
        if let Some(err) = r.err() {
            return Err(format!("guest: evolve request: {}", err));
        }
        let src = source::<P>(name)?;
        e.set_composite(src.composite);
        if stream_id.is_empty() {
            stream_id = e.stream_id().as_bytes();
        }
        let ctx = Context { source: src.name, stream_id: e.stream_id(), key, composite: src.composite };
        let present = run.present;
        let (cur, next) = run.slots();
        if !present {
            *cur = if d.single {
                p.initial(Some(&e), &ctx)
            } else {
                let mctx = Context { source: src.name, stream_id: "", key, composite: &[] };
                p.initial(None, &mctx)
            };
        }
        next.clone_from(cur);
        let res = p.evolve(next, &e, &ctx);
        let failed = settle(p, &mut run, &e, &ctx, out, res)?;
        if failed {
            if i == n - 1 {
                end = Some(r.offset());
            }
            break;
        }
        if i == n - 1 {
            end = Some(r.offset());
        }
    }
    if n == 0 {
        end = Some(r.offset());
    }
    out.push(0); // ends the decisions
    // ABI 1.1: after the events, an optional flags byte. A host that only
    // needs to know whether the state exists gets an empty item for it.
    let omit = match end {
        Some(o) => input.get(o).map_or(false, |f| f & 1 != 0),
        None => false,
    };
    if run.present && omit {
        out.push(1);
    } else if run.present {
        encode_fields(out, &run.st[run.at]).map_err(|m| format!("guest: state: {}", m))?;
    } else {
        out.push(0);
    }
    out.push((run.removed && !run.present) as u8);
    if run.present {
        let ctx = Context { source: d.sources[0].name, stream_id: utf8(stream_id), key, composite: d.sources[0].composite };
        let mut it = Attrs::optional(out);
        p.to_item(&run.st[run.at], &ctx, &mut it);
        it.finish().map_err(|m| format!("guest: to_item: {}", m))?;
    } else {
        out.push(0);
    }
    Ok(())
}

fn with_composite<'a>(e: Event<'a>, composite: &'static [&'static str]) -> Event<'a> {
    e.with_composite(composite)
}

/// Appends the decision of an event evolve folded into the other state
/// slot with result `res`, making that slot the state when it applied;
/// returns whether it failed (which ends the run).
#[inline]
fn settle<P: Projection>(p: &P, run: &mut Run<P::State>, e: &Event<'_>, ctx: &Context<'_>, out: &mut Vec<u8>, res: Result<Step, Error>) -> Result<bool, String> {
    match res {
        Ok(Step::Applied) => {
            out.extend_from_slice(&[OUTCOME_APPLIED, 0, 0]);
            let mut fx = Effects::new(out);
            p.effects(e, Some(&run.st[1 - run.at]), ctx, &mut fx);
            fx.finish().map_err(|m| format!("guest: effects of {} v{}: {}", e.stream_id(), e.version(), m))?;
            run.at = 1 - run.at;
            run.present = true;
            run.removed = false;
            Ok(false)
        }
        Ok(Step::Skip) => {
            out.extend_from_slice(&[OUTCOME_SKIPPED, 0, 0, 0]);
            Ok(false)
        }
        Ok(Step::RemoveRow) => {
            out.extend_from_slice(&[OUTCOME_APPLIED, 1, 0]);
            let mut fx = Effects::new(out);
            p.effects(e, None, ctx, &mut fx);
            fx.finish().map_err(|m| format!("guest: effects of {} v{}: {}", e.stream_id(), e.version(), m))?;
            run.present = false;
            run.removed = true;
            Ok(false)
        }
        Err(err) => {
            let o = if p.terminal(&err, ctx) { OUTCOME_REJECTED } else { OUTCOME_FAILED };
            out.extend_from_slice(&[o, 0]);
            put_error(out, &err);
            out.push(0);
            Ok(o == OUTCOME_FAILED)
        }
    }
}

fn initial<P: Projection>(p: &P, input: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let d = P::DESCRIPTION;
    let mut r = Reader::new(input);
    let src_name = r.bytes();
    let stream_id = r.bytes();
    let kstart = r.offset();
    r.skip_opt_item();
    let key = &input[kstart..r.offset()];
    let has_event = r.bool();
    let e = if has_event { Some(Event::read(&mut r, &[])) } else { None };
    r.end()?;
    let src = source::<P>(src_name).unwrap_or(&d.sources[0]);
    let st = if d.single {
        let e = match e {
            Some(e) => with_composite(e, src.composite),
            None => return Err("guest: initial of a single-source projection needs the event".into()),
        };
        let ctx = Context { source: src.name, stream_id: utf8(stream_id), key, composite: src.composite };
        p.initial(Some(&e), &ctx)
    } else {
        let ctx = Context { source: utf8(src_name), stream_id: "", key, composite: &[] };
        p.initial(None, &ctx)
    };
    encode_fields(out, &st)
}

fn terminal<P: Projection>(p: &P, input: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let mut r = Reader::new(input);
    let src_name = r.bytes();
    let tag = r.bytes();
    let msg = r.bytes();
    r.end()?;
    let src = source::<P>(src_name)?;
    let err = Error::new(String::from_utf8_lossy(tag), String::from_utf8_lossy(msg));
    let ctx = Context { source: src.name, stream_id: "", key: &[], composite: src.composite };
    out.push(p.terminal(&err, &ctx) as u8);
    Ok(())
}

fn to_item<P: Projection>(p: &P, input: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let d = P::DESCRIPTION;
    let mut r = Reader::new(input);
    let sstart = r.offset();
    r.skip_opt_item();
    let state = &input[sstart..r.offset()];
    let stream_id = r.bytes();
    let kstart = r.offset();
    r.skip_opt_item();
    let key = &input[kstart..r.offset()];
    r.end()?;
    if state.first() == Some(&0) {
        out.push(0);
        return Ok(());
    }
    let mut st = P::State::default();
    decode_into(&mut st, state)?;
    let ctx = Context { source: d.sources[0].name, stream_id: utf8(stream_id), key, composite: d.sources[0].composite };
    let mut it = Attrs::optional(out);
    p.to_item(&st, &ctx, &mut it);
    it.finish()
}

fn effects<P: Projection>(p: &P, input: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let mut r = Reader::new(input);
    let src_name = r.bytes();
    let stream_id = r.bytes();
    let kstart = r.offset();
    r.skip_opt_item();
    let key = &input[kstart..r.offset()];
    let e = Event::read(&mut r, &[]);
    let nstart = r.offset();
    r.skip_opt_item();
    let next = &input[nstart..r.offset()];
    r.end()?;
    let composite = source::<P>(src_name).map(|s| s.composite).unwrap_or(&[]);
    let e = with_composite(e, composite);
    let next = if next.first() == Some(&0) {
        None
    } else {
        let mut st = P::State::default();
        decode_into(&mut st, next)?;
        Some(st)
    };
    let ctx = Context { source: utf8(src_name), stream_id: utf8(stream_id), key, composite };
    let mut fx = Effects::new(out);
    p.effects(&e, next.as_ref(), &ctx, &mut fx);
    fx.finish()
}
