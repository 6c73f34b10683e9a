#!/usr/bin/env python3
"""Areas depend one way: an area's headers and sources (include/gpuforecast/<area>/, src/<area>/)
include only areas below it in the order docs/architecture.md states on its "Order:" line.

    area_order_test.py SOURCE_DIR

A violation fails, naming the file, the include and the two areas. The few violations not yet
removed are listed below with the work that removes them; one that no longer occurs fails too,
so the list only shrinks.
"""
import os
import re
import sys

NOT_YET_REMOVED = {
}

# Public headers are named "gpuforecast/<area>/...", internal ones (src/) "<area>/...".
INCLUDE = re.compile(r'^\s*#\s*include\s+[<"](?:gpuforecast/)?([a-z_]+)/', re.M)


def stated_order(root: str) -> list:
    doc = os.path.join(root, "docs", "architecture.md")
    for line in open(doc, encoding="utf-8"):
        if line.startswith("Order:"):
            return [a.strip(" `.\n") for a in line[len("Order:"):].split("<")]
    sys.exit(f"{doc}: no line starting with \"Order:\" (the areas, bottom to top, separated by <)")


def main():
    root = sys.argv[1]
    order = stated_order(root)
    rank = {area: i for i, area in enumerate(order)}
    failures, seen = [], set()
    for base in ("include/gpuforecast", "src"):
        top = os.path.join(root, base)
        for area in sorted(os.listdir(top)):
            folder = os.path.join(top, area)
            if not os.path.isdir(folder) or area in ("common",):  # src/common: helpers of every area
                continue
            if area not in rank:
                failures.append(f"{base}/{area}/: an area not in docs/architecture.md's Order line")
                continue
            for dirpath, _, files in os.walk(folder):
                for name in sorted(files):
                    path = os.path.join(dirpath, name)
                    for m in INCLUDE.finditer(open(path, encoding="utf-8", errors="replace").read()):
                        other = m.group(1)
                        if other == area or other not in rank or rank[other] < rank[area]:
                            continue
                        seen.add((area, other))
                        if (area, other) not in NOT_YET_REMOVED:
                            failures.append(f"{os.path.relpath(path, root)}: includes {other}/, "
                                            f"an area above {area} ({' < '.join(order)})")
    for pair, reason in NOT_YET_REMOVED.items():
        if pair not in seen:
            failures.append(f"{pair[0]} no longer includes {pair[1]}: remove it from NOT_YET_REMOVED ({reason})")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"{len(order)} areas in order; {len(NOT_YET_REMOVED)} known exceptions, each still present")


if __name__ == "__main__":
    main()
