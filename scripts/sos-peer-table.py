#!/usr/bin/env python3
"""The table of scripts/sos-peer: reads OUT/raw/<round>-<lib>-<program>.txt,
extracts each figure, prints median [min-max] per library and the ratios
(> 1: ours is faster). Usage: sos-peer-table.py OUT lib...
"""
import re
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])
libs = sys.argv[2:]


def tables(text):
    """The perf suite's "Message Size" tables: a list of {size: first value}."""
    ts = []
    for line in text.splitlines():
        if line.startswith("Message Size"):
            ts.append({})
            continue
        m = re.match(r"\s+(\d+)\s+([\d.]+)", line)
        if m and ts:
            ts[-1].setdefault(int(m.group(1)), float(m.group(2)))
    return ts


def amo_rate(text, op, ty="ulong"):
    """Mops/s of `op` on `ty` in the atomics tables."""
    sec = None
    for line in text.splitlines():
        m = re.match(r"shmem_(\w+)$", line.strip())
        if m:
            sec = m.group(1)
            continue
        f = line.split()
        if sec == op and len(f) >= 3 and f[0] == ty:
            return float(f[2])
    return None


def table_at(i, size):
    def get(text):
        ts = tables(text)
        if i < 0:
            i2 = len(ts) + i
        else:
            i2 = i
        return ts[i2].get(size) if 0 <= i2 < len(ts) else None
    return get


def regex(pat, group=1):
    def get(text):
        m = re.search(pat, text, re.M)
        return float(m.group(group)) if m else None
    return get


def lfinc_us(text):
    """lfinc's "N loops of ... in S secs": microseconds per fetch-inc."""
    m = re.search(r"(\d+) loops of \S+ in\s+([\d.]+) secs", text)
    return float(m.group(2)) * 1e6 / int(m.group(1)) if m else None


def awk(pat, idx):
    """Field `idx` (0-based; negative from the end) of the first line matching `pat`."""
    def get(text):
        for line in text.splitlines():
            if re.search(pat, line):
                f = line.split()
                try:
                    return float(f[idx])
                except (IndexError, ValueError):
                    return None
        return None
    return get


def wall(text):
    if "EXIT" in text or "NOT BUILT" in text:
        return None
    return regex(r"^WALL ([\d.]+)")(text)


# (program, figure label, extractor, kind: time = lower is better, rate = higher)
FIGS = [
    ("lat_put", "shmem_latency_put_perf: long_p ping-pong, us", table_at(0, 8), "time"),
    ("lat_put", "shmem_latency_put_perf: put 8 B, us", table_at(2, 8), "time"),
    ("lat_put", "shmem_latency_put_perf: put 4 KiB, us", table_at(2, 4096), "time"),
    ("lat_get", "shmem_latency_get_perf: long_g, us", table_at(0, 8), "time"),
    ("lat_get", "shmem_latency_get_perf: get 8 B, us", table_at(2, 8), "time"),
    ("lat_get", "shmem_latency_get_perf: get 4 KiB, us", table_at(2, 4096), "time"),
    ("bw_put", "shmem_bw_put_perf: 8 B, MB/s", table_at(0, 8), "rate"),
    ("bw_put", "shmem_bw_put_perf: 4 KiB, MB/s", table_at(0, 4096), "rate"),
    ("bw_put", "shmem_bw_put_perf: 1 MiB, MB/s", table_at(0, 1048576), "rate"),
    ("bw_get", "shmem_bw_get_perf: 8 B, MB/s", table_at(0, 8), "rate"),
    ("bw_get", "shmem_bw_get_perf: 4 KiB, MB/s", table_at(0, 4096), "rate"),
    ("bw_get", "shmem_bw_get_perf: 1 MiB, MB/s", table_at(0, 1048576), "rate"),
    ("bibw_put", "shmem_bibw_put_perf: 8 B, MB/s", table_at(0, 8), "rate"),
    ("bibw_put", "shmem_bibw_put_perf: 4 KiB, MB/s", table_at(0, 4096), "rate"),
    ("bibw_put", "shmem_bibw_put_perf: 1 MiB, MB/s", table_at(0, 1048576), "rate"),
    ("bw_amo", "shmem_bw_atomics_perf: add (ulong), Mops/s", lambda t: amo_rate(t, "add"), "rate"),
    ("bw_amo", "shmem_bw_atomics_perf: fadd (ulong), Mops/s", lambda t: amo_rate(t, "fadd"), "rate"),
    ("bw_amo", "shmem_bw_atomics_perf: cswap (ulong), Mops/s", lambda t: amo_rate(t, "cswap"), "rate"),
    ("bw_nb_amo", "shmem_bw_nb_atomics_perf: fadd_nbi (ulong), Mops/s", lambda t: amo_rate(t, "fadd"), "rate"),
    ("bw_nb_amo", "shmem_bw_nb_atomics_perf: fetch_nbi (ulong), Mops/s", lambda t: amo_rate(t, "fetch"), "rate"),
    ("bw_put_ctx", "shmem_bw_put_ctx_perf: 8 B, MB/s", table_at(0, 8), "rate"),
    ("bw_put_ctx", "shmem_bw_put_ctx_perf: 4 KiB, MB/s", table_at(0, 4096), "rate"),
    ("lat_put_ctx", "shmem_latency_put_ctx_perf: put 8 B, us", table_at(-1, 8), "time"),
    ("lat_put_ctx", "shmem_latency_put_ctx_perf: put 4 KiB, us", table_at(-1, 4096), "time"),
    ("gups", "apps/gups -m 65536: GUP/s", regex(r"^([\d.]+) Billion\(10\^9\) Updates    per second"), "rate"),
    ("mandelbrot", "apps/mandelbrot: work rate, points/s", awk(r"Total work rate", -1), "rate"),
    ("binary_search", "apps/binary-search: job wall time (start-up included), s", wall, "time"),
    ("sping", "unit/sping: us per one-way 128-long put + wait_until", awk(r"pinged", -4), "time"),
    # lfinc prints "usecs per" as seconds x 10^5 / loops (a tenth of the
    # time): take its loop count and elapsed seconds instead.
    ("lfinc", "unit/lfinc: us per blocking fetch-inc", lfinc_us, "time"),
    ("bigget", "unit/bigget -v: large gets, MB/s", awk(r"ave", 2), "rate"),
    ("flag_pingpong", "flag_pingpong: p + wait_until ping-pong, static, us/round trip", regex(r"^ROW pingpong-p-wait\s+static=([\d.]+)"), "time"),
    ("flag_pingpong", "flag_pingpong: p + wait_until ping-pong, heap, us/round trip", regex(r"^ROW pingpong-p-wait\s+static=\S+ heap=([\d.]+)"), "time"),
    ("flag_pingpong", "flag_pingpong: put 8 B + quiet, static, us", regex(r"^ROW put-8B\s+static=([\d.]+)"), "time"),
    ("flag_pingpong", "flag_pingpong: put 8 B + quiet, heap, us", regex(r"^ROW put-8B\s+static=\S+ heap=([\d.]+)"), "time"),
]

vals = {}
failed = {}
for f in sorted(out.glob("raw/*.txt")):
    r, rest = f.stem.split("-", 1)
    lib = next((l for l in sorted(libs, key=len, reverse=True) if rest.startswith(l + "-")), None)
    if lib is None:
        continue
    prog = rest[len(lib) + 1:]
    text = f.read_text(errors="replace")
    for p, label, get, kind in FIGS:
        if p != prog:
            continue
        try:
            v = get(text)
        except (ValueError, IndexError):
            v = None
        if v is None or v <= 0:
            why = "not built" if "NOT BUILT" in text else ("failed" if "EXIT" in text else "no figure")
            failed.setdefault((label, lib), why)
        else:
            vals.setdefault((label, lib), []).append(v)


def fmt(xs):
    return f"{statistics.median(xs):.4g} [{min(xs):.4g}-{max(xs):.4g}]"


def ratio(label, kind, a, b):
    xa, xb = vals.get((label, a)), vals.get((label, b))
    if not xa or not xb:
        return "n/a"
    ma, mb = statistics.median(xa), statistics.median(xb)
    return f"{(mb / ma if kind == 'time' else ma / mb):.2f}x"


pairs = [(a, b) for a, b in [("ours", "ompi"), ("ours", "sos"), ("ours-sockets", "sos"),
                              ("ours-tcp", "ompi"), ("ours-udp", "ompi"), ("ours-tcp", "sos")]
         if a in libs and b in libs]
where = "two hosts, 1 PE each" if "ours-tcp" in libs else "one host"
head = [f"figure (2 PEs, {where})"] + libs + [f"{a} vs {b}" for a, b in pairs]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for p, label, _, kind in FIGS:
    row = [label]
    for lib in libs:
        xs = vals.get((label, lib))
        row.append(fmt(xs) if xs else failed.get((label, lib), "n/a"))
    row += [ratio(label, kind, a, b) for a, b in pairs]
    print("| " + " | ".join(row) + " |")
