#!/usr/bin/env python3
"""Counts test results and prints one line: "N passed, N failed, N skipped".

Inputs (any number of each):
  --gtest FILE     a GoogleTest JSON report (--gtest_output=json:FILE)
  --junit FILE     a JUnit XML report (pytest --junitxml=FILE)
  --check NAME=OK  a pass/fail check that is not a test framework (OK: 0 or 1)
  --missing NAME   a test binary that should have written a report but did not
                   (it crashed or timed out): counted as one failure
  --prefix TEXT    printed before the counts, e.g. "GPU suite:"
Failed tests are listed before the summary line, which is always last.
"""
import argparse
import json
import os
import sys
import xml.etree.ElementTree as ET


def gtest_counts(path, failed_names):
    with open(path) as f:
        report = json.load(f)
    passed = failed = skipped = 0
    for suite in report.get("testsuites", []):
        for test in suite.get("testsuite", []):
            name = f"{suite.get('name')}.{test.get('name')}"
            if test.get("failures"):
                failed += 1
                failed_names.append(name)
            elif test.get("result") in ("SKIPPED", "SUPPRESSED") or test.get("status") == "NOTRUN":
                skipped += 1
            else:
                passed += 1
    return passed, failed, skipped


def junit_counts(path, failed_names):
    root = ET.parse(path).getroot()
    passed = failed = skipped = 0
    for case in root.iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
            failed_names.append(name)
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gtest", action="append", default=[])
    parser.add_argument("--junit", action="append", default=[])
    parser.add_argument("--check", action="append", default=[])
    parser.add_argument("--missing", action="append", default=[])
    parser.add_argument("--prefix", default="")
    args = parser.parse_args()

    passed = failed = skipped = 0
    failed_names = []
    for path, counter in [(p, gtest_counts) for p in args.gtest] + [
        (p, junit_counts) for p in args.junit
    ]:
        if not os.path.exists(path):
            failed += 1
            failed_names.append(f"{path} (no report written)")
            continue
        try:
            p, f, s = counter(path, failed_names)
        except (ValueError, ET.ParseError) as e:
            failed += 1
            failed_names.append(f"{path} (unreadable report: {e})")
            continue
        passed, failed, skipped = passed + p, failed + f, skipped + s
    for name in args.missing:
        failed += 1
        failed_names.append(f"{name} (crashed or timed out before writing its report)")
    for check in args.check:
        name, _, ok = check.rpartition("=")
        if ok == "1":
            passed += 1
        else:
            failed += 1
            failed_names.append(name)

    if failed_names:
        print("Failed:")
        for name in failed_names:
            print(f"  {name}")
    prefix = f"{args.prefix} " if args.prefix else ""
    print(f"{prefix}{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
