#!/usr/bin/env python3
"""Splits CPU profile samples into the parts of a row's (or a request's)
CPU, as docs/BENCHMARKS.md ("The host's CPU per row") reports them.

    go tool pprof -traces BINARY PROFILE... > traces.txt
    docs/bench/rowsplit.py rows traces.txt BATCHES ROWS     # BenchmarkBatchRoundTrips
    docs/bench/rowsplit.py request traces.txt:OPS ...       # BenchmarkClientRequest

Each sample goes to the first part, in the order below, one of whose
regular expressions matches a frame of its stack (GC's background work
alone; an allocation's assist or sweep counts where it was made)."""
import re
import sys

ROWS = [
    ("in-process server (ddblocal, its net/http server, the netenv log)",
     r"ddblocal\.|internal/netenv\.|net/http\.\(\*conn\)\.|net/http\.\(\*response\)|net/http\.\(\*connReader\)|net/http\.\(\*chunkWriter\)|net/http\.checkConnErrorWriter|net/http\.\(\*Server\)|net/http\.\(\*expectContinueReader\)|net/http\.\(\*body\)\.Read"),
    ("SigV4 signing (key, canonical request, payload hash)",
     r"aws/signer/v4|crypto/sha256\.Sum256|crypto/hmac|ddbclient\.\(\*signer\)"),
    ("answer decoding (ddbjson into abi items)",
     r"ddbjson\.Answer|ddbjson\.\(\*Node\)|ddbjson\.\(\*decoder\)|dynamo\.member|dynamo\.in$"),
    ("item encoding (abi to DynamoDB JSON)",
     r"dynamo\.\(\*enc\)|ddbjson\.Append|dynamo\.\(\*DB\)\.wire\w+\.func1$"),
    ("HTTP client (net/http transport, request, body, checksum)",
     r"net/http\.|ddbclient\.|aws/transport/http|hash/crc32|net\.\(\*conn\)"),
    ("plugin calls (fold through the guest SDK)", r"sdk-guest|host/logic\.|host/plugin\.|wazero"),
    ("logging and metrics", r"log/slog|telemetry|metrics"),
    ("engine bookkeeping (apply, batch, decode, event store)", r"host/internal/|dynafold/host\."),
    ("GC (background marking)", r"runtime\.gcBgMarkWorker|runtime\.bgsweep|runtime\.bgscavenge"),
    ("scheduler and other runtime", r"runtime\."),
]

REQUEST = [
    ("GC: background marking", r"runtime\.gcBgMarkWorker|runtime\.bgsweep|runtime\.bgscavenge"),
    ("GC: assists in allocating goroutines", r"runtime\.gcAssistAlloc"),
    ("preemption (asyncPreempt: GC's stack scans)", None),
    ("loopback server (net/http server, fixed answer)",
     r"net/http\.\(\*conn\)\.|fixedServer|net/http\.\(\*response\)|net/http\.\(\*connReader\)|net/http\.\(\*chunkWriter\)|net/http\.checkConnErrorWriter"),
    ("answer decoding: the items' maps (make, assign, grow)", r"runtime\.mapassign|runtime\.makemap|internal/runtime/maps"),
    ("answer decoding: the rest", r"ddbjson\.Answer|ddbjson\.\(\*Node\)|ddbjson\.\(\*decoder\)|dynamo\.member"),
    ("SigV4 signing", r"aws/signer/v4|crypto/sha256\.Sum256|crypto/hmac|ddbclient\.\(\*signer\)"),
    ("request encoding", r"dynamo\.\(\*enc\)|ddbjson\.Append|dynamo\.\(\*DB\)\.wire\w+\.func1$"),
    ("HTTP client (net/http transport, request, answer read, checksum)",
     r"net/http\.|ddbclient\.|aws/transport/http|hash/crc32|net\.\(\*conn\)|rawSigned"),
    ("scheduler and other runtime", r"runtime\."),
]


def samples(path):
    """Yields (milliseconds, frames leaf first) of a pprof -traces dump."""
    ms, frames = None, []
    for line in open(path):
        if line.startswith("-----------+"):
            if ms is not None:
                yield ms, frames
            ms, frames = None, []
            continue
        m = re.match(r"\s+(\d+(?:\.\d+)?)(ms|s)\s+(\S.*)", line)
        if m and ms is None:
            ms = float(m.group(1)) * (1000 if m.group(2) == "s" else 1)
            frames = [m.group(3).strip()]
        elif ms is not None and line.strip():
            frames.append(line.strip())
    if ms is not None:
        yield ms, frames


def part(rules, frames):
    for name, rx in rules:
        if rx is None:  # preemption: the sample's own frame
            if frames[0] == "runtime.asyncPreempt":
                return name
            continue
        if name.startswith("answer decoding: the items"):
            if any(re.search(r"ddbjson\.", f) for f in frames) and any(re.search(rx, f) for f in frames):
                return name
            continue
        if any(re.search(rx, f) for f in frames):
            return name
    return "other"


def split(rules, path):
    parts, total = {}, 0.0
    for ms, frames in samples(path):
        total += ms
        p = part(rules, frames)
        parts[p] = parts.get(p, 0) + ms
    return parts, total


def main():
    if sys.argv[1] == "rows":
        path, batches, rows = sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
        parts, total = split(ROWS, path)
        print("| part | CPU ms | share | µs per row |\n|---|---:|---:|---:|")
        for name, v in sorted(parts.items(), key=lambda kv: -kv[1]):
            print(f"| {name} | {v:.0f} | {100 * v / total:.1f}% | {1000 * v / batches / rows:.1f} |")
        print(f"| total | {total:.0f} | 100% | {1000 * total / batches / rows:.1f} |")
        return
    res = []
    for arg in sys.argv[2:]:
        path, ops = arg.rsplit(":", 1)
        parts, total = split(REQUEST, path)
        res.append(({k: v * 1000 / float(ops) for k, v in parts.items()}, total * 1000 / float(ops)))
    print("| part (µs of CPU per request) | " + " | ".join(a.rsplit(":", 1)[0] for a in sys.argv[2:]) + " |")
    print("|---|" + "---:|" * len(res))
    for name in [n for n, _ in REQUEST] + ["other"]:
        if any(name in r[0] for r in res):
            print(f"| {name} | " + " | ".join(f"{r[0].get(name, 0):.1f}" for r in res) + " |")
    print("| total | " + " | ".join(f"{r[1]:.1f}" for r in res) + " |")


if __name__ == "__main__":
    main()
