#!/usr/bin/env python3
"""Compares Lightning Thunder's nvFuser-parametrized tests run on fuser and
on nvFuser (tools/gpu_thunder.sh): per file, passed / failed / skipped
(xfails counted as skipped, as pytest reports them) for each executor, the
tests that pass on one and not on the other, and every failure on fuser
with the first line of its message. Prints markdown.

    python3 tools/thunder_test_report.py <folder of {fuser,nvfuser}_<file>.xml>
"""

import glob
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
                                  ("skipped", " XFAIL "), ("failed", " XPASS ")):
                if word in line and "::" in line:
                    name = line.split("::", 1)[1].split()[0]
                    result[name] = (outcome, "")
    return result


def counts(results):
    c = {"passed": 0, "failed": 0, "skipped": 0}
    for outcome, _ in results.values():
        c[outcome] += 1
    return c


def main():
    folder = sys.argv[1]
    files = sorted(
        {
            os.path.splitext(os.path.basename(p))[0].split("_", 1)[1]
            for p in glob.glob(f"{folder}/*_test_*.xml") + glob.glob(f"{folder}/*_test_*.log")
        }
    )
    runs = {}
    unfinished = set()
    for f in files:
        for e in EXECUTORS:
            xml = os.path.join(folder, f"{e}_{f}.xml")
            log = os.path.join(folder, f"{e}_{f}.log")
            if os.path.exists(xml):
                runs[(e, f)] = outcomes(xml)
            elif os.path.exists(log):
                runs[(e, f)] = outcomes_from_log(log)
                unfinished.add((e, f))
            else:
                runs[(e, f)] = None
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
        only_nv = sorted(t for t in nr if nr[t][0] == "passed" and fr.get(t, ("",))[0] != "passed")
        only_fu = sorted(t for t in fr if fr[t][0] == "passed" and nr.get(t, ("",))[0] != "passed")
        print(f"\n## {f}\n")
        print(f"Pass on nvFuser only: {len(only_nv)}; on fuser only: {len(only_fu)}.\n")
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
