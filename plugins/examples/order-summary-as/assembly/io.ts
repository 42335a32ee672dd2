// Input and output through the Extism kernel: the request is copied into a
// reused buffer 8 bytes per host call (input_load_u64), the response written
// to kernel memory 8 bytes per kernel call (store_u64), as the PDK allows.

import {
  alloc,
  input_length,
  input_load_u64,
  input_load_u8,
  output_set,
  store_u64,
  store_u8,
} from "@extism/as-pdk/lib/env";
import { Writer } from "./wire";


export let inPtr: usize = 0;
export let inCap: usize = 0;
export let inLen: usize = 0;

// readInput copies the call's input into a reused buffer, 8 bytes per host call.
export function readInput(): void {
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

export const out = new Writer();

// flush hands out's bytes to the host as the call's output.
export function flush(): i32 {
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
// guestError answers a guest error of export fn, named first as the SDKs'
// errors are ("evolve: guest: ...").
export function guestError(fn: string, msg: string): i32 {
  out.reset();
  out.byte(1);
  out.utf8(fn + ": " + msg);
  return flush();
}
export function writeUtf8Str(s: string): void {
  const b = String.UTF8.encode(s);
  out.str(changetype<usize>(b), <usize>b.byteLength);
}
