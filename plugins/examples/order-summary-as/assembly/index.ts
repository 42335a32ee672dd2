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

import {
  alloc,
  error_set,
  input_length,
  input_load_u64,
  input_load_u8,
  output_set,
  store_u64,
  store_u8,
} from "@extism/as-pdk/lib/env";
import { Bytes, Reader, Writer, eq, kindName, KIND_N, KIND_NULL, KIND_S } from "./wire";
import { parseInt64, parseNumber, parseOk, writeFloat, writeInt } from "./num";

const ABI_MAJOR: i32 = 1;
const ABI_MINOR: i32 = 0;
const NAME = "order-summary";
const VERSION = "1.0.0";
const STREAM = "Order";
const ENTITY = "OrderSummary";

// ---- input and output through the Extism kernel ----

let inPtr: usize = 0;
let inCap: usize = 0;
let inLen: usize = 0;

// readInput copies the call's input into a reused buffer, 8 bytes per host call.
function readInput(): void {
  const n = <usize>input_length();
  if (n > inCap) {
    const c = n + (n >> 2) + 64;
    inPtr = inPtr == 0 ? heap.alloc(c) : heap.realloc(inPtr, c);
    inCap = c;
  }
  // Unrolled: every loop iteration costs a termination check under a host
  // that enforces timeouts.
  let i: usize = 0;
  for (; i + 32 <= n; i += 32) {
    store<u64>(inPtr + i, input_load_u64(<u64>i));
    store<u64>(inPtr + i + 8, input_load_u64(<u64>(i + 8)));
    store<u64>(inPtr + i + 16, input_load_u64(<u64>(i + 16)));
    store<u64>(inPtr + i + 24, input_load_u64(<u64>(i + 24)));
  }
  for (; i + 8 <= n; i += 8) store<u64>(inPtr + i, input_load_u64(<u64>i));
  for (; i < n; i++) store<u8>(inPtr + i, input_load_u8(<u64>i));
  inLen = n;
}

const out = new Writer();

// flush hands out's bytes to the host as the call's output.
function flush(): i32 {
  const n = out.len;
  const off = alloc(<u64>n);
  let i: usize = 0;
  const p = out.ptr;
  for (; i + 32 <= n; i += 32) {
    store_u64(off + <u64>i, load<u64>(p + i));
    store_u64(off + <u64>(i + 8), load<u64>(p + i + 8));
    store_u64(off + <u64>(i + 16), load<u64>(p + i + 16));
    store_u64(off + <u64>(i + 24), load<u64>(p + i + 24));
  }
  for (; i + 8 <= n; i += 8) store_u64(off + <u64>i, load<u64>(p + i));
  for (; i < n; i++) store_u8(off + <u64>i, load<u8>(p + i));
  output_set(off, <u64>n);
  return 0;
}

// guestError answers status 1 with msg: the call itself failed.
function guestError(msg: string): i32 {
  out.reset();
  out.byte(1);
  out.utf8(msg);
  return flush();
}

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

// ---- constant byte strings ----

const B_NEW = new Bytes("new");
const B_PLACED = new Bytes("placed");
const B_SHIPPED = new Bytes("shipped");
const B_EMPTY = new Bytes("");
const B_ORDER = new Bytes(STREAM);
const B_ITEM_ADDED = new Bytes("ItemAdded");
const B_ORDER_PLACED = new Bytes("OrderPlaced");
const B_ORDER_SHIPPED = new Bytes("OrderShipped");
const B_PRICE = new Bytes("price");
const B_CUSTOMER = new Bytes("customer");
const B_ORDER_ID = new Bytes("orderId");
const B_STATUS = new Bytes("status");
const B_ITEMS = new Bytes("items");
const B_TOTAL = new Bytes("total");
const B_VERSION = new Bytes("version");
// Attribute names as encoded (length-prefixed), each followed by its kind
// byte where the kind is fixed.
const E_ORDER_ID = new Bytes("\x07orderId\x01");
const E_CUSTOMER = new Bytes("\x08customer\x01");
const E_STATUS = new Bytes("\x06status\x01");
const E_ITEMS = new Bytes("\x05items");
const E_TOTAL = new Bytes("\x05total");
const E_VERSION = new Bytes("\x07version");
const E_GSI1PK = new Bytes("\x06gsi1pk\x01");
const E_GSI1SK = new Bytes("\x06gsi1sk\x01");
const E_KEY_PK = new Bytes("\x03\x02pk\x01");
const E_KEY_SK = new Bytes("\x02sk\x01\x0cOrderSummary\x00");
const E_ENTITY_HASH = new Bytes("OrderSummary#");
const E_APPLIED = new Bytes("\x01\x00\x00\x00");

// ---- the state ----

/** State is OrderSummary: strings are views of the input or constants. */
class State {
  orderIdPtr: usize = 0;
  orderIdLen: usize = 0;
  customerPtr: usize = 0;
  customerLen: usize = 0;
  statusPtr: usize = 0;
  statusLen: usize = 0;
  items: i64 = 0;
  total: f64 = 0;
  version: i64 = 0;

  clear(): void {
    this.orderIdPtr = B_EMPTY.ptr;
    this.orderIdLen = 0;
    this.customerPtr = B_EMPTY.ptr;
    this.customerLen = 0;
    this.statusPtr = B_EMPTY.ptr;
    this.statusLen = 0;
    this.items = 0;
    this.total = 0;
    this.version = 0;
  }

  copyFrom(o: State): void {
    this.orderIdPtr = o.orderIdPtr;
    this.orderIdLen = o.orderIdLen;
    this.customerPtr = o.customerPtr;
    this.customerLen = o.customerLen;
    this.statusPtr = o.statusPtr;
    this.statusLen = o.statusLen;
    this.items = o.items;
    this.total = o.total;
    this.version = o.version;
  }

  /** initial is Initial(streamID, e): OrderSummary{OrderID: streamID, Status: "new"}. */
  initial(streamIdPtr: usize, streamIdLen: usize): void {
    this.clear();
    this.orderIdPtr = streamIdPtr;
    this.orderIdLen = streamIdLen;
    this.statusPtr = B_NEW.ptr;
    this.statusLen = B_NEW.len;
  }
}

const st = new State(); // the row's state during a fold
const next = new State(); // the state evolve builds
let decodeErr: string | null = null;

// writeFields appends the state's attributes in the Go struct's order.
function writeFields(w: Writer, s: State): void {
  w.put(E_ORDER_ID);
  w.str(s.orderIdPtr, s.orderIdLen);
  w.put(E_CUSTOMER);
  w.str(s.customerPtr, s.customerLen);
  w.put(E_STATUS);
  w.str(s.statusPtr, s.statusLen);
  w.put(E_ITEMS);
  writeNumberInt(w, s.items);
  w.put(E_TOTAL);
  writeNumberFloat(w, s.total);
  w.put(E_VERSION);
  writeNumberInt(w, s.version);
}

function writeNumberInt(w: Writer, v: i64): void {
  w.byte(KIND_N);
  const at = w.len;
  w.byte(0);
  writeInt(w, v);
  store<u8>(w.ptr + at, <u8>(w.len - at - 1)); // at most 20 digits: one length byte
}

function writeNumberFloat(w: Writer, v: f64): void {
  w.byte(KIND_N);
  const at = w.len;
  w.byte(0);
  writeFloat(w, v);
  store<u8>(w.ptr + at, <u8>(w.len - at - 1)); // at most 24 characters
}

/** writeState appends the state as an optional item (6 attributes). */
function writeState(w: Writer, s: State): void {
  w.byte(7);
  writeFields(w, s);
}

/** writeItem appends to_item(state): the state plus the byStatus index keys. */
function writeItem(w: Writer, s: State): void {
  w.byte(9);
  writeFields(w, s);
  w.put(E_GSI1PK);
  w.str(s.statusPtr, s.statusLen);
  w.put(E_GSI1SK);
  w.str(s.orderIdPtr, s.orderIdLen);
}

const sr = new Reader();

/**
 * decodeState reads the row as read (an optional item) into s, like the Go
 * SDK's struct mapping: unknown attributes are skipped, NULL is the zero
 * value, other kinds are an error (decodeErr).
 */
function decodeState(ptr: usize, len: usize, s: State): bool {
  const r = sr;
  r.reset(ptr, len);
  const n = r.optCount();
  for (let i: i64 = 0; i < n && r.err === null; i++) {
    const np = r.str();
    const nl = r.slen;
    if (r.err !== null) break;
    const k = r.byte();
    if (r.err !== null) break;
    let field = 0;
    if (eq(np, nl, B_ORDER_ID)) field = 1;
    else if (eq(np, nl, B_CUSTOMER)) field = 2;
    else if (eq(np, nl, B_STATUS)) field = 3;
    else if (eq(np, nl, B_ITEMS)) field = 4;
    else if (eq(np, nl, B_TOTAL)) field = 5;
    else if (eq(np, nl, B_VERSION)) field = 6;
    if (field == 0) {
      r.skipPayload(k, 0);
      continue;
    }
    if (k == KIND_NULL) {
      if (field == 1) s.orderIdLen = 0;
      else if (field == 2) s.customerLen = 0;
      else if (field == 3) s.statusLen = 0;
      else if (field == 4) s.items = 0;
      else if (field == 5) s.total = 0;
      else s.version = 0;
      continue;
    }
    if (field <= 3) {
      if (k != KIND_S) {
        r.fail("cannot decode " + kindName(k) + " into string");
        break;
      }
      const p = r.str();
      if (field == 1) {
        s.orderIdPtr = p;
        s.orderIdLen = r.slen;
      } else if (field == 2) {
        s.customerPtr = p;
        s.customerLen = r.slen;
      } else {
        s.statusPtr = p;
        s.statusLen = r.slen;
      }
      continue;
    }
    if (k != KIND_N) {
      r.fail("cannot decode " + kindName(k) + " into " + (field == 5 ? "float64" : "int64"));
      break;
    }
    const p = r.str();
    const l = r.slen;
    if (r.err !== null) break;
    if (field == 5) {
      const v = parseNumber(p, l);
      if (!parseOk) r.fail('number "' + String.UTF8.decodeUnsafe(p, l) + '" does not fit float64');
      s.total = v;
    } else {
      const v = parseInt64(p, l);
      if (!parseOk) r.fail('number "' + String.UTF8.decodeUnsafe(p, l) + '" does not fit int64');
      if (field == 4) s.items = v;
      else s.version = v;
    }
  }
  if (r.err === null && r.pos != r.end) r.fail((r.end - r.pos).toString() + " trailing bytes");
  decodeErr = r.err;
  return r.err === null;
}

// ---- events ----

/** Event is one event of the request, its strings views of the input. */
class Event {
  streamPtr: usize = 0;
  streamLen: usize = 0;
  streamIdPtr: usize = 0;
  streamIdLen: usize = 0;
  version: u64 = 0;
  typePtr: usize = 0;
  typeLen: usize = 0;
  dataPtr: usize = 0;
  dataLen: usize = 0;
}

function readEvent(r: Reader, e: Event): void {
  e.streamPtr = r.str();
  e.streamLen = r.slen;
  e.streamIdPtr = r.str();
  e.streamIdLen = r.slen;
  e.version = r.uvarint();
  e.typePtr = r.str();
  e.typeLen = r.slen;
  e.dataPtr = r.sized();
  e.dataLen = r.slen;
  r.sized(); // metadata
  r.str(); // timestamp
}

const dr = new Reader();

// findData positions dr at the payload of the data attribute name and returns
// its kind (0 when absent or malformed), like the Go SDK's Event.find.
function findData(e: Event, name: Bytes): u8 {
  const r = dr;
  r.reset(e.dataPtr, e.dataLen);
  const n = r.optCount();
  for (let i: i64 = 0; i < n; i++) {
    const np = r.str();
    const nl = r.slen;
    const k = r.byte();
    if (r.err !== null) return 0;
    if (eq(np, nl, name)) return k;
    r.skipPayload(k, 0);
    if (r.err !== null) return 0;
  }
  return 0;
}

// The outcome of evolving one event.
let errTag = "";
let errMsg = "";

/**
 * evolveOne is the Go plugin's Evolve: it folds e into next (a copy of the
 * current state) and returns true, or sets errTag/errMsg and returns false.
 */
function evolveOne(s: State, e: Event): bool {
  const tp = e.typePtr;
  const tl = e.typeLen;
  if (eq(tp, tl, B_ITEM_ADDED)) {
    // The hot path: one attribute, read without a mapping.
    let ok = findData(e, B_PRICE) == KIND_N;
    let price: f64 = 0;
    if (ok) {
      const p = dr.str();
      const l = dr.slen;
      ok = dr.err === null;
      if (ok) {
        price = parseNumber(p, l);
        ok = parseOk;
      }
    }
    if (!ok) {
      errTag = "BadEvent";
      errMsg = "ItemAdded v" + e.version.toString() + ": price is not a number";
      return false;
    }
    s.items++;
    s.total += price;
    return true;
  }
  if (eq(tp, tl, B_ORDER_PLACED)) {
    if (!decodeOrderPlaced(e)) {
      errTag = "Error";
      errMsg = dr.err !== null ? <string>dr.err : "";
      return false;
    }
    s.customerPtr = placedCustomerPtr;
    s.customerLen = placedCustomerLen;
    s.statusPtr = B_PLACED.ptr;
    s.statusLen = B_PLACED.len;
    return true;
  }
  if (eq(tp, tl, B_ORDER_SHIPPED)) {
    s.statusPtr = B_SHIPPED.ptr;
    s.statusLen = B_SHIPPED.len;
    return true;
  }
  errTag = "UnknownEvent";
  errMsg = "order-summary does not fold " + goQuote(tp, tl);
  return false;
}

let placedCustomerPtr: usize = 0;
let placedCustomerLen: usize = 0;

// decodeOrderPlaced maps the data into OrderPlaced{Customer} like e.Decode.
function decodeOrderPlaced(e: Event): bool {
  placedCustomerPtr = B_EMPTY.ptr;
  placedCustomerLen = 0;
  const r = dr;
  r.reset(e.dataPtr, e.dataLen);
  if (e.dataLen == 0) return true;
  const n = r.optCount();
  for (let i: i64 = 0; i < n && r.err === null; i++) {
    const np = r.str();
    const nl = r.slen;
    if (r.err !== null) break;
    const k = r.byte();
    if (r.err !== null) break;
    if (!eq(np, nl, B_CUSTOMER)) {
      r.skipPayload(k, 0);
      continue;
    }
    if (k == KIND_NULL) {
      placedCustomerPtr = B_EMPTY.ptr;
      placedCustomerLen = 0;
    } else if (k == KIND_S) {
      placedCustomerPtr = r.str();
      placedCustomerLen = r.slen;
    } else {
      r.fail("cannot decode " + kindName(k) + " into string");
    }
  }
  if (r.err === null && r.pos != r.end) r.fail((r.end - r.pos).toString() + " trailing bytes");
  return r.err === null;
}

// goQuote quotes the UTF-8 bytes [p, p+n) like Go's strconv.Quote (%q).
function goQuote(p: usize, n: usize): string {
  const w = quoteBuf;
  w.reset();
  w.byte(0x22);
  let i: usize = 0;
  while (i < n) {
    const c = <u32>load<u8>(p + i);
    if (c < 0x80) {
      i++;
      if (c == 0x22 || c == 0x5c) {
        w.byte(0x5c);
        w.byte(<u8>c);
      } else if (c >= 0x20 && c < 0x7f) {
        w.byte(<u8>c);
      } else if (c == 7) w.ascii("\\a");
      else if (c == 8) w.ascii("\\b");
      else if (c == 12) w.ascii("\\f");
      else if (c == 10) w.ascii("\\n");
      else if (c == 13) w.ascii("\\r");
      else if (c == 9) w.ascii("\\t");
      else if (c == 11) w.ascii("\\v");
      else hexEscape(w, "\\x", c, 2);
      continue;
    }
    // decode one UTF-8 sequence
    let size: usize = 0;
    let r: u32 = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      size = 2;
      r = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      size = 3;
      r = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      size = 4;
      r = c & 0x07;
    }
    let valid = size > 0 && i + size <= n;
    for (let j: usize = 1; valid && j < size; j++) {
      const b = <u32>load<u8>(p + i + j);
      if ((b & 0xc0) != 0x80) valid = false;
      r = (r << 6) | (b & 0x3f);
    }
    if (valid) {
      if ((size == 3 && (r < 0x800 || (r >= 0xd800 && r <= 0xdfff))) || (size == 4 && (r < 0x10000 || r > 0x10ffff))) {
        valid = false;
      }
    }
    if (!valid) {
      hexEscape(w, "\\x", c, 2);
      i++;
      continue;
    }
    // Go keeps printable runes; the non-printable ones (C1 controls, format
    // characters, separators other than space) are escaped.
    if (r < 0xa0 || r == 0xad || (r >= 0x200b && r <= 0x200f) || (r >= 0x2028 && r <= 0x202e) ||
      (r >= 0x2060 && r <= 0x206f) || r == 0xfeff || (r >= 0xfff9 && r <= 0xfffb) || r == 0x2000 ||
      (r > 0x2000 && r <= 0x200a) || r == 0x3000 || r == 0x1680 || r == 0x205f || r == 0xa0) {
      if (r < 0x10000) hexEscape(w, "\\u", r, 4);
      else hexEscape(w, "\\U", r, 8);
    } else {
      w.bytes(p + i, size);
    }
    i += size;
  }
  w.byte(0x22);
  return String.UTF8.decodeUnsafe(w.ptr, w.len);
}

const quoteBuf = new Writer();

function hexEscape(w: Writer, prefix: string, v: u32, digits: i32): void {
  w.ascii(prefix);
  for (let d = digits - 1; d >= 0; d--) {
    const x = (v >> (<u32>d * 4)) & 0xf;
    w.byte(<u8>(x < 10 ? 0x30 + x : 0x61 + x - 10));
  }
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
  if (serr !== null) return guestError(serr);
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
  if (r.err !== null) return guestError("guest: key request: " + <string>r.err);
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
  if (r.err !== null) return guestError("guest: evolve request: " + <string>r.err);
  st.clear();
  if (present && !decodeState(statePtr, stateLen, st)) {
    return guestError("guest: state as read: " + <string>decodeErr);
  }
  out.reset();
  out.byte(0);
  for (let i: usize = 0; i < n; i++) {
    const np = r.str();
    const nl = r.slen;
    readEvent(r, ev);
    if (r.err !== null) return guestError("guest: evolve request: " + <string>r.err);
    const serr = checkSource(np, nl);
    if (serr !== null) return guestError(serr);
    if (sidLen == 0) {
      sidPtr = ev.streamIdPtr;
      sidLen = ev.streamIdLen;
    }
    if (present) next.copyFrom(st);
    else next.initial(ev.streamIdPtr, ev.streamIdLen);
    if (evolveOne(next, ev)) {
      if (!isFinite(next.total)) {
        return guestError("guest: state: guest: mapping float64: " + (next.total > 0 ? "+Inf" : "-Inf") + " cannot be stored as a DynamoDB number");
      }
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
    break;
  }
  out.byte(0); // end of decisions
  if (present) writeState(out, st);
  else out.byte(0);
  out.byte(0); // removed
  if (present) writeItem(out, st);
  else out.byte(0);
  return flush();
}

function writeUtf8Str(s: string): void {
  const b = String.UTF8.encode(s);
  out.str(changetype<usize>(b), <usize>b.byteLength);
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
  if (r.err !== null) return guestError(<string>r.err);
  if (!hasEvent) return guestError("guest: initial of a single-source projection needs the event");
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
  if (r.err !== null) return guestError(<string>r.err);
  const serr = checkSource(sp, sl);
  if (serr !== null) return guestError(serr);
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
  if (r.err !== null) return guestError(<string>r.err);
  out.reset();
  out.byte(0);
  if (load<u8>(sp) == 0) {
    out.byte(0);
    return flush();
  }
  st.clear();
  if (!decodeState(sp, sl, st)) return guestError(<string>decodeErr);
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
  if (r.err !== null) return guestError(<string>r.err);
  out.reset();
  out.byte(0);
  out.byte(0); // no effects
  return flush();
}
