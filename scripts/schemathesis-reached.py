#!/usr/bin/env python3
"""Counts the operations of an OpenAPI document that schemathesis reached with a 2xx answer.

    scripts/schemathesis-reached.py [--at-least N] OPENAPI.yaml REPORT.har [REPORT.har ...]

Reads schemathesis's HAR reports (`--report har`), matches every request to its operation (method and path template)
and prints how many of the document's operations got at least one 2xx, then those that never did; with --at-least N,
fails (exit 1) when fewer than N did. A run that only
gets refusals (401, 404, 400) fuzzes the refusals, not the services behind them.
"""
import json
import re
import sys
from urllib.parse import urlsplit

import yaml

METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def operations(document):
    """(method, template, pattern) for every operation, literal paths before templated ones."""
    found = []
    for template, item in document.get("paths", {}).items():
        pattern = re.compile("^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)) + "$")
        for method in item:
            if method in METHODS:
                found.append((method.upper(), template, pattern))
    return sorted(found, key=lambda op: op[1].count("{"))


def main(arguments):
    floor = 0
    if arguments[:1] == ["--at-least"] and len(arguments) > 1:
        floor, arguments = int(arguments[1]), arguments[2:]
    if len(arguments) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(arguments[0]) as file:
        known = operations(yaml.safe_load(file))
    reached, tried = set(), set()
    for report in arguments[1:]:
        with open(report) as file:
            entries = json.load(file)["log"]["entries"]
        for entry in entries:
            method, path = entry["request"]["method"], urlsplit(entry["request"]["url"]).path
            operation = next(((m, t) for m, t, p in known if m == method and p.match(path)), None)
            if operation is None:
                continue
            tried.add(operation)
            if 200 <= entry["response"]["status"] < 300:
                reached.add(operation)
    everything = {(m, t) for m, t, _ in known}
    print(f"schemathesis reached {len(reached)} of {len(everything)} operations with a 2xx ({len(tried)} tried)")
    for method, template in sorted(everything - reached, key=lambda op: (op[1], op[0])):
        print(f"  no 2xx: {method} {template}{'' if (method, template) in tried else ' (not tried)'}")
    if len(reached) < floor:
        print(f"fewer than {floor} operations got a 2xx: the runs no longer reach the services")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
