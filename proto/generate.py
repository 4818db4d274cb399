"""Regenerate the Python code of the twistarena.v1 contract.

The .proto files under ``proto/twistarena/v1`` are the source of truth; the
generated ``*_pb2.py``, ``*_pb2.pyi`` (typing) and ``*_pb2_grpc.py`` files next
to them are committed and must never be edited by hand. After changing a
.proto file run::

    .venv/bin/python proto/generate.py

``tests/server/test_contract.py`` regenerates into a temporary directory and
fails when the committed files differ.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

#: The folder that holds ``twistarena/v1/*.proto`` (the import root of the contract).
PROTO_ROOT = Path(__file__).resolve().parent
PACKAGE_DIR = Path("twistarena") / "v1"


def proto_files() -> list[Path]:
    """The contract's .proto files, relative to ``PROTO_ROOT``, in a stable order."""
    return sorted(p.relative_to(PROTO_ROOT) for p in (PROTO_ROOT / PACKAGE_DIR).glob("*.proto"))


def generate(out_root: Path = PROTO_ROOT) -> list[Path]:
    """Run protoc into ``out_root`` (which receives ``twistarena/v1/...``); returns the files."""
    import grpc_tools
    from grpc_tools import protoc

    well_known = Path(grpc_tools.__file__).resolve().parent / "_proto"
    (out_root / PACKAGE_DIR).mkdir(parents=True, exist_ok=True)
    files = [str(p) for p in proto_files()]
    args = [
        "grpc_tools.protoc",
        f"--proto_path={PROTO_ROOT}",
        f"--proto_path={well_known}",
        f"--python_out={out_root}",
        f"--pyi_out={out_root}",
        f"--grpc_python_out={out_root}",
        *files,
    ]
    code = protoc.main(args)
    if code != 0:
        raise RuntimeError(f"protoc failed with exit code {code}: {' '.join(args)}")
    return sorted(generated_files(out_root))


def generated_files(root: Path) -> list[Path]:
    """Generated files under ``root/twistarena/v1`` (relative to ``root``)."""
    out: list[Path] = []
    for pattern in ("*_pb2.py", "*_pb2.pyi", "*_pb2_grpc.py"):
        out.extend(p.relative_to(root) for p in (root / PACKAGE_DIR).glob(pattern))
    return sorted(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=PROTO_ROOT,
                        help="output root (default: next to the .proto files)")
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
