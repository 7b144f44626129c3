"""``fesub info PATH``: print the summary a result file (``.nc``) or an output folder records."""

from __future__ import annotations


def add_arguments(parser) -> None:
    parser.add_argument("path", help="a result file (.nc), a summary.json or a study's output folder")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def _show(rec: dict) -> None:
    for key in ("study", "fesub_version", "created"):
        if key in rec:
            print(f"{key}: {rec[key]}")
    for section in ("parameters", "results"):
        items = rec.get(section) or {}
        if items:
            print(f"{section}:")
            for k, q in items.items():
                unit = f" {q['unit']}" if isinstance(q, dict) and q.get("unit") else ""
                val = q.get("value") if isinstance(q, dict) else q
                print(f"  {k} = {val}{unit}")
    for n in rec.get("notes", []):
        print(f"note: {n}")
    if "schema" not in rec:  # not a summary in the schema: show it whole
        import json

        print(json.dumps(rec, indent=1, default=str))


def run(args) -> int:
    import json

    from ..io import info

    rec = info(args.path)
    if args.json:
        print(json.dumps(rec, indent=1))
    else:
        _show(rec)
    return 0
