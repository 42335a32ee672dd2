// The helper layer for folds that go beyond order-summary: the multi-source
// context of each evolved event (its source and stream id), and the
// decisions a fold returns (abi/ABI.md §3.3): Applied with outbox effects,
// Applied with removeRow, Skipped, Rejected and Failed. order-summary itself
// needs none of it (one source, no effects, never removes); the test plugin
// examples/tally.ts shows every piece.

import { Bytes, Reader, Writer, eq, KIND_M, KIND_N, KIND_S } from "./wire";
import { Event, readEvent } from "./fold";

// The outcomes of a Decision.
export const APPLIED: u8 = 1;
export const SKIPPED: u8 = 2;
export const REJECTED: u8 = 3;
export const FAILED: u8 = 4;

/**
 * Context is what evolve knows of an event besides the event: the source it
 * comes from (the name the plugin declared in describe) and its stream
 * instance. Both are views of the request.
 */
export class Context {
  sourcePtr: usize = 0;
  sourceLen: usize = 0;
  streamIdPtr: usize = 0;
  streamIdLen: usize = 0;

  /** isSource compares the source's name with a constant. */
  isSource(name: Bytes): bool {
    return eq(this.sourcePtr, this.sourceLen, name);
  }

  /** source returns the source's name as a string (allocates). */
  source(): string {
    return String.UTF8.decodeUnsafe(this.sourcePtr, this.sourceLen);
  }

  /** streamId returns the stream id as a string (allocates). */
  streamId(): string {
    return String.UTF8.decodeUnsafe(this.streamIdPtr, this.streamIdLen);
  }
}

/** EvolveHead is the part of an EvolveRequest before its events. */
export class EvolveHead {
  keyPtr: usize = 0;
  keyLen: usize = 0;
  streamIdPtr: usize = 0;
  streamIdLen: usize = 0;
  statePtr: usize = 0;
  stateLen: usize = 0;
  /** present: the row exists (state is a present item). */
  present: bool = false;
  /** n is the number of (source, event) pairs that follow. */
  n: usize = 0;
}

/** readEvolveHead reads the key, stream id, state and event count of an evolve request. */
export function readEvolveHead(r: Reader, h: EvolveHead): void {
  h.keyPtr = r.sized();
  h.keyLen = r.slen;
  h.streamIdPtr = r.str();
  h.streamIdLen = r.slen;
  h.statePtr = r.sized();
  h.stateLen = r.slen;
  h.present = h.stateLen > 0 && load<u8>(h.statePtr) != 0;
  h.n = r.count(13);
}

/** readSourced reads one (source, Event) pair of an evolve request into ctx and e. */
export function readSourced(r: Reader, ctx: Context, e: Event): void {
  ctx.sourcePtr = r.str();
  ctx.sourceLen = r.slen;
  readEvent(r, e);
  ctx.streamIdPtr = e.streamIdPtr;
  ctx.streamIdLen = e.streamIdLen;
}

/**
 * omitState reads the optional flags byte (ABI 1.1) after every event was
 * read: true when the host needs only whether the state exists.
 */
export function omitState(r: Reader): bool {
  return r.err === null && r.pos < r.end && (load<u8>(r.pos) & 1) != 0;
}

/**
 * Effects collects the outbox effects of one event: a list of values,
 * usually maps. Write a map with map(n) and then exactly n attributes, in
 * ascending byte order of their names (the encoding's rule).
 */
export class Effects {
  buf: Writer = new Writer();
  count: u32 = 0;

  reset(): void {
    this.buf.reset();
    this.count = 0;
  }

  /** map starts a map value of n attributes. */
  map(n: u32): void {
    this.count++;
    this.buf.byte(KIND_M);
    this.buf.uvarint(<u64>n);
  }

  /** s adds a string attribute from a string. */
  s(name: string, value: string): void {
    this.buf.strAscii(name);
    this.buf.byte(KIND_S);
    strUtf8(this.buf, value);
  }

  /** sView adds a string attribute from a view of the request. */
  sView(name: string, p: usize, n: usize): void {
    this.buf.strAscii(name);
    this.buf.byte(KIND_S);
    this.buf.str(p, n);
  }

  /** n adds a number attribute from its decimal text. */
  n(name: string, text: string): void {
    this.buf.strAscii(name);
    this.buf.byte(KIND_N);
    this.buf.strAscii(text);
  }

  /** writeTo appends the effects as the Decision's list<Value>. */
  writeTo(w: Writer): void {
    w.uvarint(<u64>this.count);
    w.bytes(this.buf.ptr, this.buf.len);
  }
}

/** strUtf8 appends s as a length-prefixed UTF-8 string. */
export function strUtf8(w: Writer, s: string): void {
  const b = String.UTF8.encode(s);
  w.str(changetype<usize>(b), <usize>b.byteLength);
}

function effectsOf(w: Writer, fx: Effects | null): void {
  if (fx === null) w.byte(0);
  else fx.writeTo(w);
}

/** writeApplied appends an Applied decision with the event's effects (null: none). */
export function writeApplied(w: Writer, fx: Effects | null): void {
  w.byte(APPLIED);
  w.byte(0); // remove
  w.byte(0); // no error
  effectsOf(w, fx);
}

/**
 * writeRemoved appends an Applied decision with removeRow: the row becomes a
 * tombstone (the state is then absent; a later event of the run starts from
 * initial). Effects of a removing event are allowed.
 */
export function writeRemoved(w: Writer, fx: Effects | null): void {
  w.byte(APPLIED);
  w.byte(1); // remove
  w.byte(0);
  effectsOf(w, fx);
}

/** writeSkipped appends a Skipped decision (state unchanged, no effects). */
export function writeSkipped(w: Writer): void {
  w.byte(SKIPPED);
  w.byte(0);
  w.byte(0);
  w.byte(0);
}

/**
 * writeError appends a Rejected or Failed decision with a typed error. After
 * Failed the run stops: write no more decisions.
 */
export function writeError(w: Writer, outcome: u8, tag: string, message: string): void {
  w.byte(outcome);
  w.byte(0);
  w.byte(1);
  strUtf8(w, tag);
  strUtf8(w, message);
  w.byte(0); // no effects
}

/** endDecisions ends the decisions of an EvolveResponse. */
export function endDecisions(w: Writer): void {
  w.byte(0);
}
