#!/usr/bin/env python3
"""A search is set up in one place, the runner (src/run/): no front end (tools/, python/src/,
benchmarks/, the other areas of src/) makes a strategy, a search context, or the resume, cache,
trace and event-log wiring of a run itself. They build a Plan and call run().

    search_setup_test.py SOURCE_DIR

A violation fails, naming the file, the line and what it sets up.
"""
import os
import re
import sys

SETUP = {
    r"\bSearchContext\s+\w+\s*[({]": "a search context",
    r"\bmake_strategy\s*\(": "a strategy",
    r"\bread_search_cache\s*\(": "a resumed run",
    r"\bKernelTunerCacheWriter\s*[({<]": "a run's cache",
    r"\bT4TraceWriter\s*[({]": "a run's trace",
    r"\badd_observer\s*\(\s*EventLog\b": "a run's event log",
}
FRONT_ENDS = ("tools", os.path.join("python", "src"), "benchmarks", "src")
ALLOWED = (os.path.join("src", "run") + os.sep, os.path.join("src", "search") + os.sep)


def main():
    root = sys.argv[1]
    failures = []
    for base in FRONT_ENDS:
        for dirpath, _, files in os.walk(os.path.join(root, base)):
            for name in sorted(files):
                if not name.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if rel.startswith(ALLOWED):
                    continue
                for number, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                    for pattern, what in SETUP.items():
                        if re.search(pattern, line):
                            failures.append(f"{rel}:{number}: sets up {what} outside the runner (build a Plan "
                                            f"and call run(), run/run.hpp): {line.strip()}")
    for f in failures:
        print(f)
    if failures:
        sys.exit(1)
    print("every search is set up by the runner (src/run/)")


if __name__ == "__main__":
    main()
