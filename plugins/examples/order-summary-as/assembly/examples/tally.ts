// as-tally: a tiny multi-source plugin that exercises the helper layer
// (../sdk.ts): the multi-source context in evolve, removeRow and outbox
// effects. Two sources, "a" (stream Alpha) and "b" (stream Beta), fold into
// one row {pk: "Tally", sk: "T"} with state {count, last}:
//   Ping  → count + 1, last = "<source>#<streamId>",
//           effect {from: "<source>#<streamId>", kind: "ping", v: <version>}
//   Close → removeRow, effect {from: …, kind: "closed"}
// Used by plugins/examples' tests through the host; not an example to deploy.

import { alloc, error_set, store_u8 } from "@extism/as-pdk/lib/env";
import { Bytes, Reader, Writer, eq, KIND_N, KIND_NULL, KIND_S } from "../wire";
import { flush, guestError, inLen, inPtr, out, readInput } from "../io";
import { ABI_MAJOR, ABI_MINOR, Event, readEvent } from "../fold";
import { parseInt64, parseOk } from "../num";
import {
  Context,
  Effects,
  EvolveHead,
  FAILED,
  endDecisions,
  omitState,
  readEvolveHead,
  readSourced,
  writeApplied,
  writeError,
  writeRemoved,
} from "../sdk";

/** abortHandler records the message as the Extism error and traps. */
function abortHandler(message: string | null, fileName: string | null, line: u32, column: u32): void {
  const b = String.UTF8.encode("abort: " + (message !== null ? message : ""));
  const n = <usize>b.byteLength;
  const off = alloc(<u64>n);
  for (let i: usize = 0; i < n; i++) store_u8(off + <u64>i, load<u8>(changetype<usize>(b) + i));
  error_set(off);
  unreachable();
}

const B_A = new Bytes("a");
const B_B = new Bytes("b");
const B_PING = new Bytes("Ping");
const B_CLOSE = new Bytes("Close");
const B_COUNT = new Bytes("count");
const B_LAST = new Bytes("last");

const req = new Reader();
const sr = new Reader();
const ev = new Event();
const ctx = new Context();
const head = new EvolveHead();
const fx = new Effects();
const lastW = new Writer(); // the new "last" value
const fromW = new Writer(); // "<source>#<streamId>" of the current event

let count: i64 = 0;
let lastPtr: usize = 0;
let lastLen: usize = 0;

export function dynafold_abi_version(): i32 {
  return (ABI_MAJOR << 16) | ABI_MINOR;
}

function sourceDesc(name: string, stream: string): void {
  out.strAscii(name);
  out.strAscii(stream);
  out.uvarint(2);
  out.strAscii("Ping");
  out.strAscii("Close");
  out.strAscii("fold");
}

export function describe(): i32 {
  out.reset();
  out.byte(0);
  out.strAscii("as-tally");
  out.strAscii("1.0.0");
  out.uvarint(<u64>ABI_MAJOR);
  out.uvarint(<u64>ABI_MINOR);
  out.uvarint(2);
  sourceDesc("a", "Alpha");
  sourceDesc("b", "Beta");
  out.uvarint(7);
  out.strAscii("describe");
  out.strAscii("key");
  out.strAscii("evolve");
  out.strAscii("initial");
  out.strAscii("terminal");
  out.strAscii("to_item");
  out.strAscii("effects");
  return flush();
}

function knownSource(p: usize, n: usize): bool {
  return eq(p, n, B_A) || eq(p, n, B_B);
}

/** key: every event folds into {pk: "Tally", sk: "T"}. */
export function key(): i32 {
  readInput();
  const r = req;
  r.reset(inPtr, inLen);
  const sp = r.str();
  if (!knownSource(sp, r.slen)) return guestError("key", "guest: as-tally has no source " + String.UTF8.decodeUnsafe(sp, r.slen));
  const n = r.count(12);
  out.reset();
  out.byte(0);
  out.uvarint(<u64>n);
  for (let i: usize = 0; i < n && r.err === null; i++) {
    readEvent(r, ev);
    out.byte(3);
    out.strAscii("pk");
    out.byte(KIND_S);
    out.strAscii("Tally");
    out.strAscii("sk");
    out.byte(KIND_S);
    out.strAscii("T");
    out.byte(0); // no error
  }
  if (r.err !== null) return guestError("key", "guest: key request: " + <string>r.err);
  return flush();
}

/** decodeState reads {count, last} from an optional item, skipping other attributes. */
function decodeState(p: usize, n: usize): string | null {
  count = 0;
  lastPtr = 0;
  lastLen = 0;
  const r = sr;
  r.reset(p, n);
  const c = r.optCount();
  for (let i: i64 = 0; i < c && r.err === null; i++) {
    const np = r.str();
    const nl = r.slen;
    const k = r.byte();
    if (eq(np, nl, B_COUNT) && k == KIND_N) {
      const vp = r.str();
      count = parseInt64(vp, r.slen);
      if (!parseOk) return "count is not an integer";
    } else if (eq(np, nl, B_LAST) && k == KIND_S) {
      lastPtr = r.str();
      lastLen = r.slen;
    } else if (k != KIND_NULL) {
      r.skipPayload(k, 0);
    }
  }
  return r.err;
}

function writeState(w: Writer): void {
  w.byte(3);
  w.strAscii("count");
  w.byte(KIND_N);
  w.strAscii(count.toString());
  w.strAscii("last");
  w.byte(KIND_S);
  w.str(lastPtr, lastLen);
}

/** from sets fromW to "<source>#<streamId>". */
function from(c: Context): void {
  fromW.reset();
  fromW.bytes(c.sourcePtr, c.sourceLen);
  fromW.byte(0x23);
  fromW.bytes(c.streamIdPtr, c.streamIdLen);
}

/** effectsOf builds the effects of an applied event into fx. */
function effectsOf(c: Context, e: Event): void {
  from(c);
  fx.reset();
  if (eq(e.typePtr, e.typeLen, B_CLOSE)) {
    fx.map(2);
    fx.sView("from", fromW.ptr, fromW.len);
    fx.s("kind", "closed");
    return;
  }
  fx.map(3);
  fx.sView("from", fromW.ptr, fromW.len);
  fx.s("kind", "ping");
  fx.n("v", e.version.toString());
}

export function evolve(): i32 {
  readInput();
  const r = req;
  r.reset(inPtr, inLen);
  readEvolveHead(r, head);
  if (r.err !== null) return guestError("evolve", "guest: evolve request: " + <string>r.err);
  let present = head.present;
  if (present) {
    const err = decodeState(head.statePtr, head.stateLen);
    if (err !== null) return guestError("evolve", "guest: state as read: " + err);
  }
  let removed = false;
  let all = true;
  out.reset();
  out.byte(0);
  for (let i: usize = 0; i < head.n; i++) {
    readSourced(r, ctx, ev);
    if (r.err !== null) return guestError("evolve", "guest: evolve request: " + <string>r.err);
    if (!knownSource(ctx.sourcePtr, ctx.sourceLen)) return guestError("evolve", "guest: as-tally has no source " + ctx.source());
    if (!present) {
      count = 0; // initial(key)
      lastPtr = 0;
      lastLen = 0;
    }
    if (eq(ev.typePtr, ev.typeLen, B_PING)) {
      count++;
      from(ctx);
      lastW.reset();
      lastW.bytes(fromW.ptr, fromW.len);
      lastPtr = lastW.ptr;
      lastLen = lastW.len;
      effectsOf(ctx, ev);
      writeApplied(out, fx);
      present = true;
      removed = false;
    } else if (eq(ev.typePtr, ev.typeLen, B_CLOSE)) {
      effectsOf(ctx, ev);
      writeRemoved(out, fx);
      present = false;
      removed = true;
    } else {
      writeError(out, FAILED, "UnknownEvent", "as-tally does not fold " + String.UTF8.decodeUnsafe(ev.typePtr, ev.typeLen));
      all = i == head.n - 1;
      break;
    }
  }
  endDecisions(out);
  if (present && all && omitState(r)) out.byte(1);
  else if (present) writeState(out);
  else out.byte(0);
  out.byte(removed && !present ? 1 : 0);
  if (present) writeState(out);
  else out.byte(0);
  return flush();
}

/** initial: a row starts at {count: 0, last: ""}. */
export function initial(): i32 {
  count = 0;
  lastPtr = 0;
  lastLen = 0;
  out.reset();
  out.byte(0);
  writeState(out);
  return flush();
}

/** terminal: no error rejects its event. */
export function terminal(): i32 {
  out.reset();
  out.byte(0);
  out.byte(0);
  return flush();
}

/** to_item: the state as it is. */
export function to_item(): i32 {
  readInput();
  const r = req;
  r.reset(inPtr, inLen);
  const sp = r.pos;
  r.skipOptItem();
  const sl = r.pos - sp;
  if (r.err !== null) return guestError("to_item", <string>r.err);
  out.reset();
  out.byte(0);
  if (sl == 0 || load<u8>(sp) == 0) {
    out.byte(0);
    return flush();
  }
  const err = decodeState(sp, sl);
  if (err !== null) return guestError("to_item", err);
  writeState(out);
  return flush();
}

/** effects: the same effects evolve puts in the event's decision. */
export function effects(): i32 {
  readInput();
  const r = req;
  r.reset(inPtr, inLen);
  ctx.sourcePtr = r.str();
  ctx.sourceLen = r.slen;
  ctx.streamIdPtr = r.str();
  ctx.streamIdLen = r.slen;
  r.skipOptItem(); // key
  readEvent(r, ev);
  r.skipOptItem(); // next
  if (r.err !== null) return guestError("effects", <string>r.err);
  effectsOf(ctx, ev);
  out.reset();
  out.byte(0);
  fx.writeTo(out);
  return flush();
}
