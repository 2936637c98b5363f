#!/usr/bin/env python3
"""Compares Lightning Thunder's nvFuser-parametrized tests run on fuser and
on nvFuser (tools/gpu_thunder.sh): per file, passed / failed / skipped
(xfails counted as skipped, as pytest reports them) for each executor, the
tests that pass on one and not on the other, and every failure on fuser
with the first line of its message. Prints markdown.

    python3 tools/thunder_test_report.py <folder of {fuser,nvfuser}_<file>[.<k>of<n>].xml>

A file run in shards (FUSER_THUNDER_SHARD, tools/pytest_shard.py) has one
report per shard; they are merged. A run's JSON-lines record
(<executor>_<file>[.<k>of<n>].jsonl, tools/pytest_outcomes.py), written as
tests finish and kept across resumed runs, is read before its junit
report; without either, a run stopped at its timeout counts the tests its
log shows finished. Tests one executor did not finish are left out of the
comparison between them.
"""

import glob
import json
import os
import sys
import xml.etree.ElementTree as ET

EXECUTORS = ("fuser", "nvfuser")


def outcomes(path):
    """{test name: (outcome, first line of its message)}."""
    result = {}
    root = ET.parse(path).getroot()
    for case in root.iter("testcase"):
        name = case.get("name")
        outcome, message = "passed", ""
        for tag in ("failure", "error"):
            node = case.find(tag)
            if node is not None:
                outcome = "failed"
                message = (node.get("message") or node.text or "").strip()
        skipped = case.find("skipped")
        if outcome == "passed" and skipped is not None:
            outcome = "skipped"
            message = (skipped.get("message") or "").strip()
        result[name] = (outcome, message.splitlines()[0][:200] if message else "")
    return result


def outcomes_from_log(path):
    """{test name: (outcome, "")} from a verbose pytest-xdist log, for a run
    stopped (at its timeout) before pytest wrote its junit report."""
    result = {}
    with open(path, errors="replace") as f:
        for line in f:
            for outcome, word in (("passed", " PASSED "), ("failed", " FAILED "),
                                  ("failed", " ERROR "), ("skipped", " SKIPPED "),
                                  ("skipped", " XFAIL "), ("passed", " XPASS ")):
                if word in line and "::" in line:
                    name = line.split("::", 1)[1].split()[0]
                    result[name] = (outcome, "")
    return result


def outcomes_from_jsonl(path):
    """{test name: (outcome, message)} from tools/pytest_outcomes.py's
    record; a later line for a test replaces an earlier one."""
    result = {}
    with open(path, errors="replace") as f:
        for line in f:
            try:
                record = json.loads(line)
                result[record["name"]] = (record["outcome"], record["message"][:200])
            except (ValueError, KeyError):
                pass  # a line cut by a kill mid-write
    return result


def counts(results):
    c = {"passed": 0, "failed": 0, "skipped": 0}
    for outcome, _ in results.values():
        c[outcome] += 1
    return c


def stem_parts(path):
    """(executor, file) of a report's name: fuser_test_ops.1of3.xml ->
    ("fuser", "test_ops")."""
    stem = os.path.basename(path).split(".", 1)[0]
    executor, file = stem.split("_", 1)
    return executor, file


def merged_run(folder, executor, file):
    """{test: (outcome, message)} over the executor's reports of `file`
    (one per shard), and whether some shard stopped before its report."""
    result, unfinished, found = {}, False, False
    pattern = os.path.join(folder, f"{executor}_{file}")
    runs = set()
    for ext in ("jsonl", "xml", "log"):
        for path in glob.glob(f"{pattern}.{ext}") + glob.glob(f"{pattern}.*.{ext}"):
            runs.add(os.path.splitext(path)[0])
    for run in sorted(runs):
        found = True
        if os.path.exists(run + ".jsonl"):
            result.update(outcomes_from_jsonl(run + ".jsonl"))
            unfinished |= not os.path.exists(run + ".xml")
        elif os.path.exists(run + ".xml"):
            result.update(outcomes(run + ".xml"))
        else:
            result.update(outcomes_from_log(run + ".log"))
            unfinished = True
    return (result if found else None), unfinished


def main():
    folder = sys.argv[1]
    files = sorted(
        {
            stem_parts(p)[1]
            for ext in ("xml", "log", "jsonl")
            for p in glob.glob(f"{folder}/*_test_*.{ext}")
        }
    )
    runs = {}
    unfinished = set()
    for f in files:
        for e in EXECUTORS:
            runs[(e, f)], stopped = merged_run(folder, e, f)
            if stopped:
                unfinished.add((e, f))
    print("| file | executor | passed | failed | skipped |")
    print("|---|---|---:|---:|---:|")
    for f in files:
        for e in EXECUTORS:
            r = runs[(e, f)]
            if r is None:
                print(f"| {f} | {e} | no report (the run did not finish) | | |")
                continue
            c = counts(r)
            note = " (stopped at its timeout: the tests that finished)" if (e, f) in unfinished else ""
            print(f"| {f} | {e}{note} | {c['passed']} | {c['failed']} | {c['skipped']} |")
    for f in files:
        fr, nr = runs[("fuser", f)], runs[("nvfuser", f)]
        if fr is None or nr is None:
            continue
        both = sorted(set(fr) & set(nr))
        only_nv = [t for t in both if nr[t][0] == "passed" and fr[t][0] != "passed"]
        only_fu = [t for t in both if fr[t][0] == "passed" and nr[t][0] != "passed"]
        print(f"\n## {f}\n")
        passed = {e: sum(r[t][0] == "passed" for t in both) for e, r in (("fuser", fr), ("nvfuser", nr))}
        print(
            f"Of the {len(both)} tests both finished, fuser passes {passed['fuser']} and "
            f"nvFuser {passed['nvfuser']}. Pass on nvFuser only: {len(only_nv)}; "
            f"on fuser only: {len(only_fu)}.\n"
        )
        for t in only_nv:
            print(f"- nvFuser only: `{t}`: fuser {fr.get(t, ('missing', ''))[0]}: {fr.get(t, ('', ''))[1]}")
        for t in only_fu:
            print(f"- fuser only: `{t}`: nvFuser {nr.get(t, ('missing', ''))[0]}: {nr.get(t, ('', ''))[1]}")
        failures = sorted(t for t in fr if fr[t][0] == "failed")
        if failures:
            print(f"\nFailures on fuser ({len(failures)}):\n")
            for t in failures:
                print(f"- `{t}`: {fr[t][1]}")


if __name__ == "__main__":
    main()
