// A test guest of the Extism transport: a minimal dynafold plugin whose
// evolve misbehaves on request. The first event's type decides: "Trap" sets
// an Extism error and traps, "ErrorSet" sets one and returns 1, "Loop"
// never returns, "GuestError" answers
// status 1, "Log" logs one message at each level (debug, info, warn, error)
// and "LogFlood" 300 at info, through the Extism log functions, before
// folding; any other run is applied, with state {count: N (the number of
// events)}.

import {
  alloc,
  error_set,
  input_length,
  input_load_u8,
  log_debug,
  log_error,
  log_info,
  log_warn,
  output_set,
  store_u8,
} from "@extism/as-pdk/lib/env";

let buf = new Array<u8>();

function put(b: u8): void {
  buf.push(b);
}

function putStr(s: string): void {
  put(<u8>s.length);
  for (let i = 0; i < s.length; i++) put(<u8>s.charCodeAt(i));
}

function flush(): i32 {
  const n = buf.length;
  const off = alloc(<u64>n);
  for (let i = 0; i < n; i++) store_u8(off + <u64>i, buf[i]);
  output_set(off, <u64>n);
  return 0;
}

// log logs s at level 0 debug, 1 info, 2 warn, 3 error.
function log(level: i32, s: string): void {
  const off = alloc(<u64>s.length);
  for (let i = 0; i < s.length; i++) store_u8(off + <u64>i, <u8>s.charCodeAt(i));
  if (level == 0) log_debug(off);
  else if (level == 1) log_info(off);
  else if (level == 2) log_warn(off);
  else log_error(off);
}

let input = new Uint8Array(0);
let pos = 0;

function readInput(): void {
  const n = <i32>input_length();
  input = new Uint8Array(n);
  for (let i = 0; i < n; i++) input[i] = input_load_u8(<u64>i);
  pos = 0;
}

// Short fields only: every length and count of the test requests is < 128.
function byte(): u8 {
  return input[pos++];
}

function skipStr(): void {
  const n = byte();
  pos += n;
}

function readStr(): string {
  const n = byte();
  let s = "";
  for (let i = 0; i < <i32>n; i++) s += String.fromCharCode(input[pos + i]);
  pos += n;
  return s;
}

function sized(): void {
  const n = <i32>input[pos] | (<i32>input[pos + 1] << 8) | (<i32>input[pos + 2] << 16) | (<i32>input[pos + 3] << 24);
  pos += 4 + n;
}

export function dynafold_abi_version(): i32 {
  return 1 << 16;
}

export function describe(): i32 {
  buf = new Array<u8>();
  put(0);
  putStr("misbehave");
  putStr("0.1.0");
  put(1);
  put(0);
  put(1);
  putStr("Order");
  putStr("Order");
  put(0);
  putStr("fold");
  put(3);
  putStr("describe");
  putStr("key");
  putStr("evolve");
  return flush();
}

export function key(): i32 {
  buf = new Array<u8>();
  put(1);
  putStr("key is not implemented");
  return flush();
}

let spin: i64 = 0;

export function evolve(): i32 {
  readInput();
  sized(); // key
  skipStr(); // streamId
  sized(); // state
  const n = byte();
  let first = "";
  if (n > 0) {
    skipStr(); // source
    skipStr(); // stream
    skipStr(); // streamId
    byte(); // version (< 128)
    first = readStr();
  }
  if (first == "Trap") {
    const msg = "boom: trap requested";
    const off = alloc(<u64>msg.length);
    for (let i = 0; i < msg.length; i++) store_u8(off + <u64>i, <u8>msg.charCodeAt(i));
    error_set(off);
    unreachable();
  }
  if (first == "ErrorSet") {
    // The Extism way to fail: an error message and a non-zero return code.
    const msg = "refused by the guest";
    const off = alloc(<u64>msg.length);
    for (let i = 0; i < msg.length; i++) store_u8(off + <u64>i, <u8>msg.charCodeAt(i));
    error_set(off);
    return 1;
  }
  if (first == "Log") {
    log(0, "extism debug");
    log(1, "extism info");
    log(2, "extism warn");
    log(3, "extism error");
  }
  if (first == "LogFlood") {
    for (let i = 0; i < 300; i++) log(1, "extism flood " + i.toString());
  }
  if (first == "Loop") {
    while (spin >= 0) spin++;
  }
  buf = new Array<u8>();
  if (first == "GuestError") {
    put(1);
    const m = "nope";
    for (let i = 0; i < m.length; i++) put(<u8>m.charCodeAt(i));
    return flush();
  }
  put(0);
  for (let i: u8 = 0; i < n; i++) {
    put(1);
    put(0);
    put(0);
    put(0);
  }
  put(0); // end of decisions
  put(2); // state: one attribute
  putStr("count");
  put(2); // N
  putStr(n.toString());
  put(0); // removed
  put(2); // item
  putStr("count");
  put(2);
  putStr(n.toString());
  return flush();
}
