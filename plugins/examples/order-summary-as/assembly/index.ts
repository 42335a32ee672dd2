// The order-summary projection (plugins/examples/order-summary) as a dynafold
// plugin in AssemblyScript, over the Extism PDK: every capability is an
// Extism function whose input is the ABI v1 request and whose output is the
// ABI v1 result (status byte, then the response), exactly as the raw ABI's
// exports return them (abi/ABI.md §2–4). dynafold_abi_version returns
// major<<16|minor as the function's return code.
//
// The fold mirrors the Go plugin byte for byte: the same state and item
// attributes in the same order, numbers formatted as the Go SDK formats them,
// the same error tags and messages.

import { alloc, error_set, store_u8 } from "@extism/as-pdk/lib/env";
import { Reader, eq } from "./wire";
import { flush, guestError, inLen, inPtr, out, readInput, writeUtf8Str } from "./io";
import {
  ABI_MAJOR,
  ABI_MINOR,
  B_ORDER,
  E_APPLIED,
  E_ENTITY_HASH,
  E_KEY_PK,
  E_KEY_SK,
  Event,
  NAME,
  STREAM,
  VERSION,
  decodeErr,
  decodeState,
  errMsg,
  errTag,
  evolveOne,
  next,
  readEvent,
  st,
  stateDataError,
  stateMismatch,
  writeItem,
  writeState,
} from "./fold";

/**
 * abortHandler replaces AssemblyScript's env.abort import (see asconfig.json):
 * it records the message as the Extism error, and the module then traps, so
 * the host fails that call only and names the message.
 */
function abortHandler(message: string | null, fileName: string | null, line: u32, column: u32): void {
  let text = "abort";
  if (message !== null) text += ": " + message;
  if (fileName !== null) text += " at " + fileName + ":" + line.toString() + ":" + column.toString();
  const b = String.UTF8.encode(text);
  const n = <usize>b.byteLength;
  const off = alloc(<u64>n);
  const p = changetype<usize>(b);
  for (let i: usize = 0; i < n; i++) store_u8(off + <u64>i, load<u8>(p + i));
  error_set(off);
  unreachable();
}

// ---- the exports ----

const req = new Reader();
const ev = new Event();

function checkSource(p: usize, l: usize): string | null {
  if (l == 0 || eq(p, l, B_ORDER)) return null;
  return 'guest: projection "' + NAME + '" has no source "' + String.UTF8.decodeUnsafe(p, l) + '"';
}

/** dynafold_abi_version returns major<<16 | minor as the Extism return code. */
export function dynafold_abi_version(): i32 {
  return (ABI_MAJOR << 16) | ABI_MINOR;
}

/** describe returns the Description (§3.4). */
export function describe(): i32 {
  out.reset();
  out.byte(0);
  out.strAscii(NAME);
  out.strAscii(VERSION);
  out.uvarint(<u64>ABI_MAJOR);
  out.uvarint(<u64>ABI_MINOR);
  out.uvarint(1); // one source
  out.strAscii(STREAM);
  out.strAscii(STREAM);
  out.uvarint(3);
  out.strAscii("OrderPlaced");
  out.strAscii("ItemAdded");
  out.strAscii("OrderShipped");
  out.strAscii("fold");
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

/** key returns each event's row key: {pk: "OrderSummary#<streamId>", sk: "OrderSummary"}. */
export function key(): i32 {
  readInput();
  const r = req;
  r.reset(inPtr, inLen);
  const sp = r.str();
  const serr = checkSource(sp, r.slen);
  if (serr !== null) return guestError("key", serr);
  const n = r.count(12);
  out.reset();
  out.byte(0);
  out.uvarint(<u64>n);
  for (let i: usize = 0; i < n && r.err === null; i++) {
    readEvent(r, ev);
    if (r.err !== null) break;
    out.put(E_KEY_PK); // two attributes: pk, S
    out.uvarint(<u64>E_ENTITY_HASH.len + <u64>ev.streamIdLen);
    out.put(E_ENTITY_HASH);
    out.bytes(ev.streamIdPtr, ev.streamIdLen);
    out.put(E_KEY_SK); // sk, S "OrderSummary", then no error
  }
  if (r.err !== null) return guestError("key", "guest: key request: " + <string>r.err);
  return flush();
}

/** evolve folds one row's run of events (§4). */
export function evolve(): i32 {
  readInput();
  const r = req;
  r.reset(inPtr, inLen);
  r.sized(); // the key: this projection does not read it
  const keyLen = r.slen;
  let sidPtr = r.str();
  let sidLen = r.slen;
  const statePtr = r.sized();
  const stateLen = r.slen;
  let present = stateLen > 0 && load<u8>(statePtr) != 0;
  const n = r.count(13);
  if (keyLen == 0 || stateLen == 0) r.fail("evolve request: key or state missing");
  if (r.err !== null) return guestError("evolve", "guest: evolve request: " + <string>r.err);
  st.clear();
  if (present && !decodeState(statePtr, stateLen, st)) {
    const why = stateMismatch !== null ? stateDataError(<string>stateMismatch) : <string>decodeErr;
    return guestError("evolve", "guest: state as read: " + why);
  }
  out.reset();
  out.byte(0);
  let all = true; // every event was read: the optional flags byte follows
  for (let i: usize = 0; i < n; i++) {
    const np = r.str();
    const nl = r.slen;
    readEvent(r, ev);
    if (r.err !== null) return guestError("evolve", "guest: evolve request: " + <string>r.err);
    const serr = checkSource(np, nl);
    if (serr !== null) return guestError("evolve", serr);
    if (sidLen == 0) {
      sidPtr = ev.streamIdPtr;
      sidLen = ev.streamIdLen;
    }
    if (present) next.copyFrom(st);
    else next.initial(ev.streamIdPtr, ev.streamIdLen);
    if (evolveOne(next, ev)) {
      out.put(E_APPLIED); // Applied, no remove, no error, no effects
      st.copyFrom(next);
      present = true;
      continue;
    }
    out.byte(4); // Failed: the run stops
    out.byte(0);
    out.byte(1);
    writeUtf8Str(errTag);
    writeUtf8Str(errMsg);
    out.byte(0);
    all = i == n - 1;
    break;
  }
  out.byte(0); // end of decisions
  // ABI 1.1: the flags byte after the events; OmitState (bit 0) asks only
  // whether the state exists, answered with an empty item.
  const omit = all && r.err === null && r.pos < r.end && (load<u8>(r.pos) & 1) != 0;
  if (present && omit) out.byte(1);
  else if (present) writeState(out, st);
  else out.byte(0);
  out.byte(0); // removed
  if (present) writeItem(out, st);
  else out.byte(0);
  return flush();
}


/** initial returns the state a row starts from: Initial(streamID, event). */
export function initial(): i32 {
  readInput();
  const r = req;
  r.reset(inPtr, inLen);
  r.str(); // source: not checked, as in the Go SDK
  const sidPtr = r.str();
  const sidLen = r.slen;
  r.skipOptItem(); // key
  const hasEvent = r.bool();
  if (hasEvent) readEvent(r, ev);
  if (r.err !== null) return guestError("initial", <string>r.err);
  if (!hasEvent) return guestError("initial", "guest: initial of a single-source projection needs the event");
  st.initial(sidPtr, sidLen);
  out.reset();
  out.byte(0);
  writeState(out, st);
  return flush();
}

/** terminal says whether an evolve error rejects its event: none does. */
export function terminal(): i32 {
  readInput();
  const r = req;
  r.reset(inPtr, inLen);
  const sp = r.str();
  const sl = r.slen;
  r.str(); // tag
  r.str(); // message
  if (r.err !== null) return guestError("terminal", <string>r.err);
  const serr = checkSource(sp, sl);
  if (serr !== null) return guestError("terminal", serr);
  out.reset();
  out.byte(0);
  out.byte(0); // false
  return flush();
}

/** to_item maps a state to the stored item. */
export function to_item(): i32 {
  readInput();
  const r = req;
  r.reset(inPtr, inLen);
  const sp = r.pos;
  r.skipOptItem();
  const sl = r.pos - sp;
  r.str(); // streamId
  r.skipOptItem(); // key
  if (r.err !== null) return guestError("to_item", <string>r.err);
  out.reset();
  out.byte(0);
  if (load<u8>(sp) == 0) {
    out.byte(0);
    return flush();
  }
  st.clear();
  if (!decodeState(sp, sl, st)) return guestError("to_item", <string>decodeErr);
  writeItem(out, st);
  return flush();
}

/** effects returns an applied event's outbox effects: none. */
export function effects(): i32 {
  readInput();
  const r = req;
  r.reset(inPtr, inLen);
  r.str(); // source
  r.str(); // streamId
  r.skipOptItem(); // key
  readEvent(r, ev);
  r.skipOptItem(); // next
  if (r.err !== null) return guestError("effects", <string>r.err);
  out.reset();
  out.byte(0);
  out.byte(0); // no effects
  return flush();
}
