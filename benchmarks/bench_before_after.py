"""fuser alone, before and after a change: the median time of every case of
the committed benchmarks (pointwise, reduction, normalization,
segmentation, matmul, transformer), so that two builds of fuser, an older
tree and the current one, can be compared on one GPU in one sitting, where
the tables of benchmarks/results/ were measured on other days and machines.

No peer runs: no nvFuser, eager or torch.compile column. Each case is
checked against PyTorch and timed exactly as its area's benchmark checks
and times fuser (same tolerance, same rotation of input copies, same
triton.testing.do_bench medians), and its GB/s or TFLOP/s is computed the
same way. The `fuser` module is whichever build is first on PYTHONPATH; the
cases always come from this tree's benchmark modules, which use only the
FusionDefinition API that both builds share.

    PYTHONPATH=<old tree>/python:<old build>/python:benchmarks \\
        FUSER_BUILD_COMMIT=<old commit> \\
        python3 benchmarks/bench_before_after.py --label before --out before.csv
    PYTHONPATH=python:build/python:benchmarks FUSER_BUILD_COMMIT=$(git rev-parse --short HEAD) \\
        python3 benchmarks/bench_before_after.py --label after --out after.csv
    python3 benchmarks/bench_before_after.py --compare before.csv after.csv \\
        --out-md before_after.md --out-png before_after.png

Where the old tree cannot be built and timed in the same sitting,
--from-results DIR writes the fuser column of the committed tables
(benchmarks/results/<area>.csv, measured on the days they name) as the
`before` file, for a run on the same kind of GPU:

    python3 benchmarks/bench_before_after.py --from-results benchmarks/results \\
        --label before --device "NVIDIA H200" --out before.csv

--sizes-mib sets the sizes of the bandwidth areas (default 256), --areas
and --cases (comma-separated) narrow the run, --list prints the cases
without running them. A ratio is before's time over after's: above 1, the
current build is faster.
"""

import argparse
import csv
import gc
import math
import os
import sys

import torch

import bench_matmul
import bench_normalization
import bench_pointwise
import bench_reduction
import bench_segmentation
import bench_transformer
from harness import fusion_of, median_ms, rotating_input_sets
from kernel_table import timed_row

BANDWIDTH_AREAS = {
    "pointwise": bench_pointwise,
    "reduction": bench_reduction,
    "normalization": bench_normalization,
}
AREAS = [*BANDWIDTH_AREAS, "segmentation", "matmul", "transformer"]
TRANSFORMER_FUSIONS = ["qkv_heads", "causal_softmax_dropout", "residual_dropout_add"]
FIELDS = [
    "area",
    "case",
    "size_mib",
    "label",
    "git_commit",
    "device",
    "fuser_ms",
    "metric",
    "unit",
    "segments",
    "error",
]
# A case whose time grew by more than this is listed as a regression.
SLOWER_BY = 0.03


def segments_of(fd):
    return "+".join(fd.last_scheduler_types())


def measure_bandwidth(fuser, case, mib):
    """harness.measure's fuser column."""
    inputs = case.make_inputs(mib)
    moved = case.bytes_moved(inputs)
    input_sets = rotating_input_sets(inputs, moved)
    expected = case.torch_fn(*inputs)
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    fd = fusion_of(fuser, case.define, inputs)
    got = fd.execute(inputs)
    case.check_outputs(got, expected, inputs)
    if any(g.data_ptr() == t.data_ptr() for g in got for t in inputs):
        # harness.measure leaves such a column out: no kernel runs.
        raise RuntimeError("returns an input as its output: no kernel to time")
    segments = segments_of(fd)
    ms = median_ms(lambda *a: fd.execute(list(a)), input_sets)
    return ms, round(moved / (ms * 1e-3) / 1e9, 1), "GB/s", segments


def measure_segmentation(fuser, case):
    """bench_segmentation.measure's fuser column."""
    inputs, expected, moved, input_sets = bench_segmentation.prepare(case)
    fd = fusion_of(fuser, case.define, inputs)
    got = fd.execute(inputs)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, rtol=case.tol, atol=case.tol)
    segments = segments_of(fd)
    runner = {"fuser": lambda *a: fd.execute(list(a))}
    row = timed_row(case.name, runner, inputs, input_sets, moved)
    return row["fuser_ms"], row["fuser_gbps"], "GB/s", segments


def measure_matmul(fuser, case):
    """bench_matmul.measure's fuser column (as there, the operands are not
    rotated)."""
    ins = case.inputs()
    expected = case.torch_fn(*ins)
    fd = fusion_of(fuser, case.define, ins)
    args = case.fd_inputs(ins)
    (got,) = fd.execute(args)
    error = bench_matmul.relative_error(got, expected)
    if not error < 2e-2:
        raise RuntimeError(f"relative error {error:.3g}")
    segments = segments_of(fd)
    ms = bench_matmul.median_ms(lambda: fd.execute(args))
    flops = 2.0 * case.m * case.n * case.k
    return ms, round(flops / (ms * 1e-3) / 1e12, 1), "TFLOP/s", segments


def measure_transformer_fusion(fuser, k):
    """bench_transformer.measure_fusions's fuser column for fusion k."""
    bt = bench_transformer
    name = TRANSFORMER_FUSIONS[k]
    fd = bt.Block(fuser, bt.SHAPE, bt.P).fusions[k]
    inputs = bt.fusion_inputs(bt.SHAPE)[k]
    expected = bt.eager_fusions(bt.SHAPE, bt.P)[k](*[t.clone() for t in inputs])
    # The residual fusion writes x in place and returns nothing.
    written = inputs[:1] if name == "residual_dropout_add" else expected
    moved = bt.nbytes(inputs) + bt.nbytes(written)
    args = [t.clone() for t in inputs]
    got = fd.execute(args)
    bt.check(name, got, inputs, args, bt.SHAPE, bt.P)
    segments = segments_of(fd)
    runner = {"fuser": lambda *a: fd.execute(list(a))}
    row = bt.row_for(name, runner, inputs, moved, rotate=4)
    return row["fuser_ms"], row["fuser_gbps"], "GB/s", segments


def measure_attention_block(fuser):
    """bench_transformer.measure_block's fuser column: the three fusions
    with PyTorch's matmuls between them (unchecked there too; no GB/s)."""
    bt = bench_transformer
    block = bt.Block(fuser, bt.SHAPE, bt.P)
    runner = {"fuser": lambda x, w_qkv, w_o: block(x, w_qkv, w_o)}
    row = bt.row_for("attention_block", runner, bt.block_inputs(bt.SHAPE), 0, rotate=2)
    return row["fuser_ms"], "", "", "; ".join(segments_of(fd) for fd in block.fusions)


def planned_cases(areas, sizes):
    """(area, case, size in MiB or "", measure(fuser)) of every case to run."""
    for area in areas:
        if area in BANDWIDTH_AREAS:
            for case in BANDWIDTH_AREAS[area].case_list():
                for mib in sizes:
                    yield area, case.name, mib, lambda f, c=case, m=mib: measure_bandwidth(f, c, m)
        elif area == "segmentation":
            for case in bench_segmentation.case_list():
                yield area, case.name, "", lambda f, c=case: measure_segmentation(f, c)
        elif area == "matmul":
            for case in bench_matmul.case_list():
                yield area, case.name, "", lambda f, c=case: measure_matmul(f, c)
        else:
            for k, name in enumerate(TRANSFORMER_FUSIONS):
                yield area, name, "", lambda f, k=k: measure_transformer_fusion(f, k)
            yield area, "attention_block", "", measure_attention_block


def selected_cases(args):
    wanted = set(args.cases.split(",")) if args.cases else None
    sizes = [int(s) for s in args.sizes_mib.split(",")]
    chosen = [
        plan for plan in planned_cases(args.areas, sizes) if wanted is None or plan[1] in wanted
    ]
    if wanted:
        for name in sorted(wanted - {plan[1] for plan in chosen}):
            print(f"no case named {name} in {','.join(args.areas)}")
    return chosen


def one_line(error):
    text = " | ".join(line.strip() for line in str(error).splitlines() if line.strip())
    return f"{type(error).__name__}: {text}"[:500]


def measure_all(args):
    if not torch.cuda.is_available():
        print("no CUDA device, nothing measured")
        return 0
    import fuser

    device = torch.cuda.get_device_name()
    commit = os.environ.get("FUSER_BUILD_COMMIT", "")
    print(f"{args.label}: fuser from {os.path.dirname(fuser.__file__)} {commit} on {device}")
    failures = 0
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        for area, name, mib, measure in selected_cases(args):
            row = dict.fromkeys(FIELDS, "")
            row.update(area=area, case=name, size_mib=mib, label=args.label)
            row.update(git_commit=commit, device=device)
            try:
                ms, metric, unit, segments = measure(fuser)
                row.update(fuser_ms=round(ms, 4), metric=metric, unit=unit, segments=segments)
            except Exception as error:  # noqa: BLE001 - one case must not end the run
                row["error"] = one_line(error)
                failures += 1
            # Rows go out as they are measured: a run cut short keeps them.
            writer.writerow(row)
            f.flush()
            size = f"{mib} MiB" if mib != "" else ""
            result = row["error"] or (
                f"{row['fuser_ms']} ms  {row['metric']} {row['unit']}  {row['segments']}"
            )
            print(f"{area:>13} {name:>36} {size:>8}  {result}", flush=True)
            gc.collect()
            torch.cuda.empty_cache()
    print(f"wrote {args.out} ({failures} case(s) failed)")
    return 0


def list_cases(args):
    counts = {}
    for area, name, mib, _ in selected_cases(args):
        counts[area] = counts.get(area, 0) + 1
        print(f"{area:>13} {name:>36} {f'{mib} MiB' if mib != '' else ''}")
    print(
        ", ".join(f"{area}: {n}" for area, n in counts.items()), f"(total {sum(counts.values())})"
    )
    return 0


# --from-results


# The committed tables each area's fuser column comes from (the resize
# cases run through the pointwise benchmark), and the metric it reports.
RESULT_TABLES = {
    "pointwise": (["pointwise.csv", "resize.csv"], "fuser_gbps", "GB/s"),
    "reduction": (["reduction.csv"], "fuser_gbps", "GB/s"),
    "normalization": (["normalization.csv"], "fuser_gbps", "GB/s"),
    "segmentation": (["segmentation.csv"], "fuser_gbps", "GB/s"),
    "matmul": (["matmul.csv"], "fuser_tflops", "TFLOP/s"),
    "transformer": (["transformer.csv"], "fuser_gbps", "GB/s"),
}


def rows_from_results(results_dir, label, device, commit, sizes):
    """The fuser column of the committed tables in `results_dir` as rows of
    this script's CSV: a `before` measured on the days those tables were,
    for a comparison on the same kind of GPU when the old tree cannot be
    built and timed in the same sitting."""
    rows = []
    seen = set()
    for area, (tables, metric, unit) in RESULT_TABLES.items():
        for table in tables:
            path = os.path.join(results_dir, table)
            if not os.path.exists(path):
                continue
            for found in read_rows(path):
                size = found.get("size_mib", "")
                key = (area, found["case"], size)
                if key in seen or found.get("fuser_ms", "") == "" or size not in sizes:
                    continue
                seen.add(key)
                row = dict.fromkeys(FIELDS, "")
                row.update(area=area, case=found["case"], size_mib=size, label=label)
                row.update(git_commit=commit, device=device, fuser_ms=found["fuser_ms"])
                row.update(metric=found.get(metric, ""), unit=unit)
                row.update(segments=found.get("fuser_segments", ""))
                rows.append(row)
    return rows


def write_from_results(args):
    sizes = {""} | set(args.sizes_mib.split(","))
    rows = rows_from_results(args.from_results, args.label, args.device, args.commit, sizes)
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out}: {len(rows)} rows from {args.from_results}")
    return 0


# --compare


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def key_of(row):
    return row["area"], row["case"], row["size_mib"]


def milliseconds(row):
    if row is None or row.get("error") or row.get("fuser_ms", "") == "":
        return None
    return float(row["fuser_ms"])


def describe(rows, path):
    """The label, commit and device a results file was measured with."""
    first = rows[0] if rows else {}
    label = first.get("label") or os.path.basename(path)
    commit = first.get("git_commit", "")
    return f"{label} ({commit})" if commit else label, first.get("device", "")


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def comparison(before_path, after_path):
    """(markdown, [(area, case, size, ratio)]) of two results files."""
    before_rows, after_rows = read_rows(before_path), read_rows(after_path)
    before = {key_of(r): r for r in before_rows}
    after = {key_of(r): r for r in after_rows}
    (before_name, before_device), (after_name, after_device) = (
        describe(before_rows, before_path),
        describe(after_rows, after_path),
    )
    lines = [f"# fuser {before_name} → {after_name}", ""]
    if before_device == after_device:
        lines.append(f"Both measured on {after_device or 'an unrecorded device'}.")
    else:
        lines.append(f"**Different devices**: {before_device} and {after_device}.")
    lines += [
        "",
        "Ratio: before's median time over after's (above 1: faster now). "
        "Segments are listed where they differ.",
        "",
        "| area | case | MiB | before ms | after ms | ratio | segments before → after |",
        "|---|---|---|---|---|---|---|",
    ]
    ratios = []
    unmatched = []
    for key in list(after) + [k for k in before if k not in after]:
        b, a = before.get(key), after.get(key)
        b_ms, a_ms = milliseconds(b), milliseconds(a)
        ratio = b_ms / a_ms if b_ms and a_ms else None
        if ratio is None:
            unmatched.append((key, b, a))
        else:
            ratios.append((*key, ratio))
        cells = [
            *key,
            time_cell(b),
            time_cell(a),
            f"{ratio:.3f}" if ratio else "-",
            segment_change(b, a),
        ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")

    lines += ["", "## Per area", "", "| area | cases | geometric mean | min | max |"]
    lines.append("|---|---|---|---|---|")
    for area in list(dict.fromkeys(r[0] for r in ratios)) + (["all"] if ratios else []):
        of_area = [r for r in ratios if area in ("all", r[0])]
        lowest = min(of_area, key=lambda r: r[3])
        highest = max(of_area, key=lambda r: r[3])
        lines.append(
            f"| {area} | {len(of_area)} | {geometric_mean([r[3] for r in of_area]):.3f} "
            f"| {lowest[3]:.3f} ({name_of(lowest)}) | {highest[3]:.3f} ({name_of(highest)}) |"
        )

    # Slower by more than SLOWER_BY: after's time over before's above 1 + SLOWER_BY.
    slower = sorted((r for r in ratios if 1 / r[3] > 1 + SLOWER_BY), key=lambda r: r[3])
    lines += ["", f"## Regressions (more than {SLOWER_BY:.0%} slower now)", ""]
    for r in slower:
        b, a = before[tuple(r[:3])], after[tuple(r[:3])]
        change = segment_change(b, a)
        lines.append(
            f"- {r[0]} {name_of(r)}: {b['fuser_ms']} → {a['fuser_ms']} ms, ratio {r[3]:.3f}"
            + (f", segments {change}" if change else "")
        )
    if not slower:
        lines.append("None.")
    if unmatched:
        lines += ["", "## Not compared", ""]
        for key, b, a in unmatched:
            why = [
                f"{side}: {row['error'] if row else 'not measured'}"
                for side, row in (("before", b), ("after", a))
                if milliseconds(row) is None
            ]
            lines.append(f"- {key[0]} {name_of((*key, None))}: " + "; ".join(why))
    return "\n".join(lines) + "\n", ratios


def time_cell(row):
    if row is None:
        return "-"
    return "error" if row["error"] else row["fuser_ms"]


def segment_change(before_row, after_row):
    """The segments as 'before → after' where both ran and they differ."""
    if not before_row or not after_row or before_row["error"] or after_row["error"]:
        return ""
    if before_row["segments"] == after_row["segments"]:
        return ""
    return f"{before_row['segments']} → {after_row['segments']}"


def name_of(ratio_row):
    area, case, size, _ = ratio_row
    return f"{case} {size} MiB" if size else case


def plot_ratios(path, ratios):
    """A horizontal bar per case: its ratio, coloured by area."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not available: no plot")
        return False
    areas = list(dict.fromkeys(r[0] for r in ratios))
    colors = {area: f"C{i}" for i, area in enumerate(areas)}
    fig, ax = plt.subplots(figsize=(8, max(3, 0.18 * len(ratios) + 1)))
    ys = range(len(ratios))
    # Bars from 1: faster cases reach right, slower ones left.
    ax.barh(ys, [r[3] - 1 for r in ratios], left=1, color=[colors[r[0]] for r in ratios])
    ax.set_yticks(list(ys))
    ax.set_yticklabels([name_of(r) for r in ratios], fontsize=6)
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.axvline(1 / (1 + SLOWER_BY), color="gray", linestyle="--", linewidth=0.8)
    ax.set_xlabel("before ms / after ms (above 1: faster now)")
    for area in areas:
        ax.barh([0], [0], left=1, color=colors[area], label=area)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    return True


def compare(args):
    markdown, ratios = comparison(*args.compare)
    print(markdown)
    if args.out_md:
        with open(args.out_md, "w") as f:
            f.write(markdown)
        print(f"wrote {args.out_md}")
    if args.out_png and ratios and plot_ratios(args.out_png, ratios):
        print(f"wrote {args.out_png}")
    return 0


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--label", help="the build measured, e.g. before or after")
    parser.add_argument("--out", help="the CSV to write")
    parser.add_argument("--sizes-mib", default="256")
    parser.add_argument("--areas", default=",".join(AREAS))
    parser.add_argument("--cases", default="")
    parser.add_argument("--list", action="store_true", help="print the cases, run nothing")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE_CSV", "AFTER_CSV"))
    parser.add_argument("--out-md")
    parser.add_argument("--out-png")
    parser.add_argument(
        "--from-results",
        metavar="DIR",
        help="write the fuser column of the committed tables in DIR as --out (with --label)",
    )
    parser.add_argument("--device", default="", help="with --from-results: the GPU they ran on")
    parser.add_argument("--commit", default="", help="with --from-results: their tree")
    args = parser.parse_args()
    if args.compare:
        return compare(args)
    if args.from_results:
        if not args.label or not args.out:
            parser.error("--from-results needs --label and --out")
        return write_from_results(args)
    args.areas = args.areas.split(",")
    unknown = [a for a in args.areas if a not in AREAS]
    if unknown:
        parser.error(f"unknown area(s) {','.join(unknown)}; areas: {','.join(AREAS)}")
    if args.list:
        return list_cases(args)
    if not args.label or not args.out:
        parser.error("measuring needs --label and --out")
    return measure_all(args)


if __name__ == "__main__":
    sys.exit(main())
