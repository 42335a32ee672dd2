// The order-summary fold, mirroring the Go plugin (plugins/examples/
// order-summary) on the Go SDK: state and item attributes in the Go struct's
// order, the state as read decoded like the SDK's struct mapping, the same
// error tags and messages.

import { Bytes, Reader, Writer, eq, kindName, KIND_N, KIND_NULL, KIND_S } from "./wire";
import { parseInt64, parseOk, writeInt } from "./num";
import { Decimal, decimalAdd, decimalError, decimalString, parseDecimal } from "./decimal";

const ZERO = new Decimal();

export const ABI_MAJOR: i32 = 1;
export const ABI_MINOR: i32 = 2;
export const NAME = "order-summary";
export const VERSION = "1.0.0";
export const STREAM = "Order";
export const ENTITY = "OrderSummary";

// ---- constant byte strings ----

export const B_NEW = new Bytes("new");
export const B_PLACED = new Bytes("placed");
export const B_SHIPPED = new Bytes("shipped");
export const B_EMPTY = new Bytes("");
export const B_ORDER = new Bytes(STREAM);
export const B_ITEM_ADDED = new Bytes("ItemAdded");
export const B_ORDER_PLACED = new Bytes("OrderPlaced");
export const B_ORDER_SHIPPED = new Bytes("OrderShipped");
export const B_PRICE = new Bytes("price");
export const B_CUSTOMER = new Bytes("customer");
export const B_ORDER_ID = new Bytes("orderId");
export const B_STATUS = new Bytes("status");
export const B_ITEMS = new Bytes("items");
export const B_TOTAL = new Bytes("total");
export const B_VERSION = new Bytes("version");
// Attribute names as encoded (length-prefixed), each followed by its kind
// byte where the kind is fixed.
export const E_ORDER_ID = new Bytes("\x07orderId\x01");
export const E_CUSTOMER = new Bytes("\x08customer\x01");
export const E_STATUS = new Bytes("\x06status\x01");
export const E_ITEMS = new Bytes("\x05items");
export const E_TOTAL = new Bytes("\x05total");
export const E_VERSION = new Bytes("\x07version");
export const E_GSI1PK = new Bytes("\x06gsi1pk\x01");
export const E_GSI1SK = new Bytes("\x06gsi1sk\x01");
export const E_KEY_PK = new Bytes("\x03\x02pk\x01");
export const E_KEY_SK = new Bytes("\x02sk\x01\x0cOrderSummary\x00");
export const E_ENTITY_HASH = new Bytes("OrderSummary#");
export const E_APPLIED = new Bytes("\x01\x00\x00\x00");

// ---- the state ----

/** State is OrderSummary: strings are views of the input or constants. */
export class State {
  orderIdPtr: usize = 0;
  orderIdLen: usize = 0;
  customerPtr: usize = 0;
  customerLen: usize = 0;
  statusPtr: usize = 0;
  statusLen: usize = 0;
  items: i64 = 0;
  total: Decimal = ZERO; // exact, like the Go plugin's guest.Decimal
  version: i64 = 0;

  clear(): void {
    this.orderIdPtr = B_EMPTY.ptr;
    this.orderIdLen = 0;
    this.customerPtr = B_EMPTY.ptr;
    this.customerLen = 0;
    this.statusPtr = B_EMPTY.ptr;
    this.statusLen = 0;
    this.items = 0;
    this.total = ZERO;
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

export const st = new State(); // the row's state during a fold
export const next = new State(); // the state evolve builds
export let decodeErr: string | null = null;
// stateMismatch is why the state did not fit State when it was well formed
// but of another type (null otherwise).
export let stateMismatch: string | null = null;

// stateDataError words a value of the row's stored state that does not fit
// its field like the Go SDK's StateDataError.
export function stateDataError(reason: string): string {
  return reason + " (the row's stored state does not match the plugin's type: a row written by another version of the plugin or edited by hand; rebuild the row)";
}

// misfit fails r for a value its field cannot hold, keeping the reason
// when it is the first failure.
function misfit(r: Reader, reason: string): void {
  if (r.err === null) stateMismatch = reason;
  r.fail(reason);
}

// writeFields appends the state's attributes in the Go struct's order.
export function writeFields(w: Writer, s: State): void {
  w.put(E_ORDER_ID);
  w.str(s.orderIdPtr, s.orderIdLen);
  w.put(E_CUSTOMER);
  w.str(s.customerPtr, s.customerLen);
  w.put(E_STATUS);
  w.str(s.statusPtr, s.statusLen);
  w.put(E_ITEMS);
  writeNumberInt(w, s.items);
  w.put(E_TOTAL);
  writeNumberDecimal(w, s.total);
  w.put(E_VERSION);
  writeNumberInt(w, s.version);
}

export function writeNumberInt(w: Writer, v: i64): void {
  w.byte(KIND_N);
  const at = w.len;
  w.byte(0);
  writeInt(w, v);
  store<u8>(w.ptr + at, <u8>(w.len - at - 1)); // at most 20 digits: one length byte
}

export function writeNumberDecimal(w: Writer, v: Decimal): void {
  w.byte(KIND_N);
  w.strAscii(decimalString(v));
}

/** writeState appends the state as an optional item (6 attributes). */
export function writeState(w: Writer, s: State): void {
  w.byte(7);
  writeFields(w, s);
}

/** writeItem appends to_item(state): the state plus the byStatus index keys. */
export function writeItem(w: Writer, s: State): void {
  w.byte(9);
  writeFields(w, s);
  w.put(E_GSI1PK);
  w.str(s.statusPtr, s.statusLen);
  w.put(E_GSI1SK);
  w.str(s.orderIdPtr, s.orderIdLen);
}

export const sr = new Reader();

/**
 * decodeState reads the row as read (an optional item) into s, like the Go
 * SDK's struct mapping: unknown attributes are skipped, NULL is the zero
 * value, other kinds are an error (decodeErr; stateMismatch when the
 * state is well formed but of another type).
 */
export function decodeState(ptr: usize, len: usize, s: State): bool {
  const r = sr;
  r.reset(ptr, len);
  stateMismatch = null;
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
      else if (field == 5) s.total = ZERO;
      else s.version = 0;
      continue;
    }
    if (field <= 3) {
      if (k != KIND_S) {
        misfit(r, "attribute \"" + (field == 1 ? "orderId" : field == 2 ? "customer" : "status") + "\": cannot decode " + kindName(k) + " into string");
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
      misfit(r, "attribute \"" + (field == 4 ? "items" : field == 5 ? "total" : "version") + "\": cannot decode " + kindName(k) + " into " + (field == 5 ? "guest.Decimal" : "int64"));
      break;
    }
    const p = r.str();
    const l = r.slen;
    if (r.err !== null) break;
    if (field == 5) {
      const v = parseDecimal(p, l);
      if (v === null || decimalError(v) !== null) {
        misfit(r, 'attribute "total": number "' + String.UTF8.decodeUnsafe(p, l) + '" does not fit guest.Decimal');
      } else s.total = v;
    } else {
      const v = parseInt64(p, l);
      if (!parseOk) misfit(r, 'attribute "' + (field == 4 ? "items" : "version") + '": number "' + String.UTF8.decodeUnsafe(p, l) + '" does not fit int64');
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
export class Event {
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

export function readEvent(r: Reader, e: Event): void {
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

export const dr = new Reader();

// findData positions dr at the payload of the data attribute name and returns
// its kind (0 when absent or malformed), like the Go SDK's Event.find.
export function findData(e: Event, name: Bytes): u8 {
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
export let errTag = "";
export let errMsg = "";

/**
 * evolveOne is the Go plugin's Evolve: it folds e into next (a copy of the
 * current state) and returns true, or sets errTag/errMsg and returns false.
 */
export function evolveOne(s: State, e: Event): bool {
  const tp = e.typePtr;
  const tl = e.typeLen;
  if (eq(tp, tl, B_ITEM_ADDED)) {
    // The hot path: one attribute, read without a mapping.
    // The price is read as an exact decimal, so 0.1 + 2.25 + 1.5 … sums
    // to what a person would write (float64 would give 5.550000000000001).
    let price: Decimal | null = null;
    if (findData(e, B_PRICE) == KIND_N) {
      const p = dr.str();
      const l = dr.slen;
      if (dr.err === null) price = parseDecimal(p, l);
    }
    if (price === null || decimalError(price) !== null) {
      errTag = "BadEvent";
      errMsg = "ItemAdded v" + e.version.toString() + ": price is not a number";
      return false;
    }
    const total = decimalAdd(s.total, price);
    const terr = decimalError(total);
    if (terr !== null) {
      errTag = "BadTotal";
      errMsg = "ItemAdded v" + e.version.toString() + ": total " + terr;
      return false;
    }
    s.items++;
    s.total = total;
    return true;
  }
  if (eq(tp, tl, B_ORDER_PLACED)) {
    if (!decodeOrderPlaced(e)) {
      errTag = "Error";
      errMsg = placedMismatch !== null ? eventDataError(<string>placedMismatch) : dr.err !== null ? <string>dr.err : "";
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

export let placedCustomerPtr: usize = 0;
export let placedCustomerLen: usize = 0;
// placedMismatch is why the data did not fit OrderPlaced when it was well
// formed but of another type (null otherwise).
export let placedMismatch: string | null = null;

// eventDataError words a value of the event's data that does not fit its
// field like the Go SDK's EventDataError.
export function eventDataError(reason: string): string {
  return "event data: " + reason + " (the event's data does not match the plugin's type)";
}

// decodeOrderPlaced maps the data into OrderPlaced{Customer} like e.Decode.
export function decodeOrderPlaced(e: Event): bool {
  placedCustomerPtr = B_EMPTY.ptr;
  placedCustomerLen = 0;
  placedMismatch = null;
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
      placedMismatch = "attribute \"customer\": cannot decode " + kindName(k) + " into string";
      r.fail(<string>placedMismatch);
    }
  }
  if (r.err === null && r.pos != r.end) r.fail((r.end - r.pos).toString() + " trailing bytes");
  return r.err === null;
}

// goQuote quotes the UTF-8 bytes [p, p+n) like Go's strconv.Quote (%q).
export function goQuote(p: usize, n: usize): string {
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

export const quoteBuf = new Writer();

export function hexEscape(w: Writer, prefix: string, v: u32, digits: i32): void {
  w.ascii(prefix);
  for (let d = digits - 1; d >= 0; d--) {
    const x = (v >> (<u32>d * 4)) & 0xf;
    w.byte(<u8>(x < 10 ? 0x30 + x : 0x61 + x - 10));
  }
}
